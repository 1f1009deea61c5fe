import AppModel
import AppProtocol
import Foundation
import PropertyList
import ScenarioModel

/// What every part of one run shares: the scenario, where the executables
/// are, the run's own simulation root and its log.
struct RunContext: Sendable {
    let scenario: Scenario
    let binaries: String
    let root: String
    let log: ScenarioLog
    /// The app's manifest as the processes read it (nil: the built-in example).
    let manifestPath: String?

    /// The arguments every simulated process of the run gets.
    func commonArguments(device: String) -> [String] {
        ["--json", "--root", root, "--device", device] + (manifestPath.map { ["--manifest", $0] } ?? [])
    }
}

/// The long-lived processes of one run (the scenario's `processes:`): it
/// launches, quits and restarts them, and ends them all when the run ends.
/// A process stays known after it exited, for checks of its events and exit.
/// Unchecked Sendable: the two driver tables are read and changed under `lock` only (parallel steps launch and quit at once).
final class ProcessRoster: @unchecked Sendable {
    private let context: RunContext
    private let lock = NSLock()
    private var drivers: [String: ProcessDriver] = [:]
    private var everStarted: [String: ProcessDriver] = [:]

    init(context: RunContext) { self.context = context }

    /// The running process of that name.
    func driver(_ name: String) throws -> ProcessDriver {
        guard let driver = lock.withLock({ drivers[name] }) else {
            throw CheckFailed("\(name) is not running (launch it first)")
        }
        guard driver.isRunning else {
            throw CheckFailed("\(name) has exited (status \(driver.exitStatus.map(String.init) ?? "?")); launch or restart it first")
        }
        return driver
    }

    /// A driver whose process may have exited (for exit checks and events seen).
    func lastDriver(_ name: String) throws -> ProcessDriver {
        guard let driver = lock.withLock({ everStarted[name] }) else { throw CheckFailed("\(name) was never launched") }
        return driver
    }

    var running: [ProcessDriver] { lock.withLock { drivers.values.filter(\.isRunning) } }

    private func start(_ name: String, arguments: [String]) throws -> ProcessDriver {
        let spec = context.scenario.processes[name]!
        return try ProcessDriver(
            name: name, executable: context.binaries + "/" + spec.role.rawValue,
            arguments: context.commonArguments(device: spec.device) + (arguments.isEmpty ? [] : ["--"] + arguments), log: context.log)
    }

    func launch(_ name: String, arguments override: [String]? = nil) throws {
        let spec = context.scenario.processes[name]!
        if let existing = lock.withLock({ drivers[name] }), existing.isRunning {
            throw CheckFailed("\(name) is already running")
        }
        let launchArguments = override ?? spec.arguments
        context.log.openLane(name)
        context.log.record(process: name, kind: .action, name: "launch",
                           text: "launch \(spec.role.rawValue)" + (launchArguments.isEmpty ? "" : " -- " + launchArguments.joined(separator: " ")))
        let driver = try start(name, arguments: launchArguments)
        lock.withLock {
            drivers[name] = driver
            everStarted[name] = driver
        }
        _ = try driver.waitFor(EventMatcher(event: "ready"), timeout: RunnerTimeouts.startUp)
        // Answering a request means its start-up (a widget's timeline too) is done.
        try driver.request(.ping, timeout: RunnerTimeouts.request)
    }

    /// Starts a process that must not come up: it exits with `status`, saying `message`.
    func launchExpectingFailure(_ name: String, message: String, status expected: Int32) throws {
        let spec = context.scenario.processes[name]!
        context.log.openLane(name)
        context.log.record(process: name, kind: .action, name: "launch", text: "launch \(spec.role.rawValue), which must fail")
        let driver = try start(name, arguments: spec.arguments)
        lock.withLock { everStarted[name] = driver }
        // Ready means it came up: no need to wait for an exit that will not come.
        if (try? driver.waitFor(EventMatcher(event: "ready"), timeout: RunnerTimeouts.startUp)) != nil {
            driver.signal(SIGKILL)
            throw CheckFailed("\(name) started and kept running; it should have failed with \(PlistJSON.quote(message))")
        }
        guard let status = driver.waitForExit(timeout: RunnerTimeouts.startUp) else {
            driver.signal(SIGKILL)
            throw CheckFailed("\(name) neither came up nor exited within \(Int(RunnerTimeouts.startUp)) s; it should have failed with \(PlistJSON.quote(message))")
        }
        let errors = driver.recordedEvents().compactMap { event -> String? in
            if case .error(let text)? = event.appEvent { text } else { nil }
        } + [driver.process.stderr]
        guard status == expected else {
            throw CheckFailed("\(name) exited with status \(status), expected \(expected): \(errors.joined(separator: " "))")
        }
        guard errors.contains(where: { $0.contains(message) }) else {
            throw CheckFailed("\(name) failed as expected, but did not say \(PlistJSON.quote(message)); it said: \(errors.joined(separator: " "))")
        }
    }

    /// A process that exited or was killed starts again; a running one is quit first.
    func restart(_ name: String, arguments: [String]?) throws {
        guard lock.withLock({ everStarted[name] }) != nil else {
            throw CheckFailed("\(name) was never launched: use launch, not restart")
        }
        if lock.withLock({ drivers[name] })?.isRunning == true { try quit(name) }
        try launch(name, arguments: arguments)
    }

    func quit(_ name: String) throws {
        let target = try driver(name)
        context.log.record(process: name, kind: .action, name: "quit", text: "quit (stdin closed)")
        if target.suspended { target.signal(SIGCONT) }
        target.process.closeStdin()
        guard target.waitForExit(timeout: RunnerTimeouts.exit) != nil else {
            throw CheckFailed("\(name) did not exit within \(Int(RunnerTimeouts.exit)) s after its stdin closed")
        }
    }

    func endAll() {
        let all = lock.withLock { Array(drivers.values) }
        for driver in all { driver.end() }
    }
}
