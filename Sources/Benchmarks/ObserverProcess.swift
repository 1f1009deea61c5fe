import ArgumentParser
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import SharedFiles
import Terminal

/// The other process of the benchmarks: observes the suite and reports, on
/// stdout, when each change arrived (CLOCK_MONOTONIC, comparable with the
/// writer's clock). Closing its stdin makes it print its reload counters and exit.
struct ObserverProcess: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "observer", shouldDisplay: false)

    @Option var root: String
    @Option var domain: String
    @Option(help: "Report every change of this key.") var probe = "probe"
    @Option(help: "Report convergence once this many keys with this prefix hold their index as value.") var burstPrefix = "burst-"
    @Option var burstCount = 0

    func run() throws {
        let files = DomainFiles(root: SimulationRoot(path: root), device: SimulationRoot.defaultDevice)
        let defaults = try files.defaults(for: domain)
        let output = LineOutput()
        let burst = BurstTracker(prefix: burstPrefix, expected: burstCount)
        let observation = defaults.observe(nil) { change in
            let now = MonotonicClock.now()
            if change.key == probe, case .integer(let value)? = change.new {
                output.line("seen \(value) \(now)")
            } else if burst.record(change) {
                output.line("converged \(now)")
            }
        }
        ChangeWatcher.shared.waitUntilIdle()
        output.line("ready")
        while readLine() != nil {}
        withExtendedLifetime(observation) {}
        let statistics = defaults.domainStatistics
        output.line("stats reloads=\(statistics.reloads) reloadReadNs=\(statistics.reloadReadTime)")
    }
}

/// Tracks a burst of keys until every one holds its final value.
/// Unchecked Sendable: its state is touched only by `record`, which the notification queue (serial) calls.
final class BurstTracker: @unchecked Sendable {
    let prefix: String
    let expected: Int
    private var correct = Set<String>()
    private var done = false

    init(prefix: String, expected: Int) {
        self.prefix = prefix
        self.expected = expected
    }

    /// Called on the notification queue, one change at a time. True once, on convergence.
    func record(_ change: DefaultsChange) -> Bool {
        guard expected > 0, !done, change.key.hasPrefix(prefix), let index = Int(change.key.dropFirst(prefix.count)) else { return false }
        if change.new == .integer(Int64(index)) { correct.insert(change.key) } else { correct.remove(change.key) }
        if correct.count == expected {
            done = true
            return true
        }
        return false
    }
}

final class LineOutput: Sendable {
    private let lock = Locked()
    func line(_ text: String) { lock.withLock { StandardOutput.write(text + "\n") } }
}
