import DeviceState
import Foundation
import GroupDefaults
import Guarded
import ScenarioModel

/// What a run waits for: events (`wait`), their absence (`quiet`), and the
/// answers of bursts, including those left running in the background.
/// Unchecked Sendable: the background bursts are read and changed under `lock` only.
final class Waits: @unchecked Sendable {
    private let context: RunContext
    private let roster: ProcessRoster
    private let lock = Locked()
    /// Bursts running in the background: process → the request id of their last write.
    private var backgroundBursts: [String: Int] = [:]

    init(context: RunContext, roster: ProcessRoster) {
        self.context = context
        self.roster = roster
    }

    func wait(in process: String, for matcher: EventMatcher, timeout: Double) throws {
        _ = try roster.lastDriver(process).waitFor(matcher, timeout: timeout)
    }

    /// The one wait that lasts its whole time by design: "nothing happens within T".
    func quiet(in process: String, for matcher: EventMatcher, seconds: Double) throws {
        let driver = try roster.lastDriver(process)
        if let seen = driver.firstNew(matcher, within: seconds) {
            throw ScenarioRunError.check("\(process) should have had no \(matcher) for \(seconds) s, but had: \(seen.text)")
        }
        // A program's channel drops events when the runner falls behind (docs/protocol.md): none may have been, or nothing was concluded.
        guard driver.transport == .channel, matcher.needsControl, driver.isRunning else { return }
        let info = try driver.request(.info, timeout: RunnerTimeouts.request).response?.fields["info"]?.dictionaryValue
        if case .integer(let dropped)? = info?["droppedEvents"], dropped > 0 {
            throw ScenarioRunError.check("\(process) dropped \(dropped) events on its control channel: that no \(matcher) came cannot be concluded")
        }
    }

    func burst(_ burst: Burst, noting step: Step) throws {
        context.log.action(burst.process, step)
        let target = try roster.driver(burst.process)
        let last = try target.startBurst(burst, pause: pause(for: burst))
        if burst.background {
            lock.withLock { backgroundBursts[burst.process] = last }
        } else if burst.waitForResponses {
            _ = try target.waitForResponse(last, timeout: RunnerTimeouts.burst)
        }
    }

    /// A paced burst's pause: real, or (`simulated-pace`) its device's clock moved on as `advance-clock` moves it.
    private func pause(for burst: Burst) -> (Int) throws -> Void {
        guard burst.simulatedPace else { return { [clock = context.clock] in clock.pause(Double($0) / 1000) } }
        let device = context.scenario.processes[burst.process]?.device ?? context.scenario.defaultDevice
        let budget = WidgetReloadBudget(root: SimulationRoot(path: context.root), device: device)
        return { try budget.advanceClock(by: Double($0) / 1000) }
    }

    func waitForBurst(of process: String) throws {
        guard let last = lock.withLock({ backgroundBursts.removeValue(forKey: process) }) else {
            throw ScenarioRunError.check("\(process) has no burst running in the background (burst: { …, background: true })")
        }
        _ = try roster.lastDriver(process).waitForResponse(last, timeout: RunnerTimeouts.burst)
    }
}
