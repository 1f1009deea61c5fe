import AppInstall
import AppModel
import AppProtocol
import ChildProcess
import CloudDevice
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import ScenarioModel

/// The long-lived processes of one run (the scenario's `processes:`): it
/// launches, quits and restarts them, and ends them all when the run ends.
/// A process stays known after it exited, for checks of its events and exit.
/// Unchecked Sendable: the two driver tables are read and changed under `lock` only (parallel steps launch and quit at once).
final class ProcessRoster: @unchecked Sendable {
    let context: RunContext
    private let lock = Locked()
    private var drivers: [String: ProcessDriver] = [:]
    private var everStarted: [String: ProcessDriver] = [:]

    init(context: RunContext) { self.context = context }

    /// The running process of that name.
    func driver(_ name: String) throws -> ProcessDriver {
        guard let driver = lock.withLock({ drivers[name] }) else {
            throw ScenarioRunError.check("\(name) is not running (launch it first)")
        }
        guard driver.isRunning else {
            throw ScenarioRunError.check("\(name) has exited (status \(driver.exitStatus.map(String.init) ?? "?")); launch or restart it first")
        }
        return driver
    }

    /// A driver whose process may have exited (for exit checks and events seen).
    func lastDriver(_ name: String) throws -> ProcessDriver {
        guard let driver = lock.withLock({ everStarted[name] }) else { throw ScenarioRunError.check("\(name) was never launched") }
        return driver
    }

    var running: [ProcessDriver] { lock.withLock { drivers.values.filter(\.isRunning) } }

    /// Marks where every process's record stands as a step starts (a `quiet` step looks from the step before it).
    func noteStepStart() {
        for driver in lock.withLock({ Array(everStarted.values) }) { driver.noteStepStart() }
    }

    /// Whether the process of that name is running now.
    func isRunning(_ name: String) -> Bool { lock.withLock { drivers[name]?.isRunning ?? false } }

    private func start(_ name: String, arguments: [String], flags: [String] = []) throws -> ProcessDriver {
        let spec = context.scenario.processes[name]!
        if let executable = spec.executable { return try startExecutable(spec, executable, launchArguments: arguments) }
        return try ProcessDriver(
            name: name, executable: context.binaries + "/" + spec.role.rawValue,
            arguments: context.commonArguments(device: spec.device) + flags
                + (arguments.isEmpty ? [] : ["--"] + arguments),
            // The run starts and ends its own cloud: an app must not start another.
            environment: [CloudDaemons.autostartVariable: "0"], transport: .standardStreams, context: context)
    }

    /// A user's executable, with its identity from the app's manifest
    /// (`ExecutableIdentity`), in the scenario file's folder. It starts with no
    /// signal blocked and leads a process group of its own, so what it starts
    /// ends with it (`ProcessDriver`'s `ownGroup`). It must be tied to the
    /// runner's life (`OwnerLifetime`), which only code run in the child can
    /// arrange: SimulatedFoundation's, as it loads, for a file that links it
    /// (it is started directly, given a socket in the run's root to connect
    /// to); `groupsim exec`'s, before it replaces itself with the executable,
    /// for any other, a script with `control: true` too (it is passed the
    /// socket, for the program the script starts).
    private func startExecutable(_ spec: ProcessSpec, _ executable: ExecutableSpec, launchArguments: [String]) throws -> ProcessDriver {
        let listener = try executable.control ? LineSocketListener(path: nextSocketPath()) : nil
        var environment = executable.environment
        environment[CloudDaemons.autostartVariable] = "0"
        let folder = (context.scenario.file as NSString).deletingLastPathComponent
        let command = executable.arguments + launchArguments
        let driver: ProcessDriver
        if let listener, executable.linksSimulatedFoundation {
            // Its load hook unblocks its signals and ties it to the runner (`ExecutableIdentity`'s
            // variables): started directly, without `groupsim exec`'s second executable to load
            // (most of a launch's time).
            var identity = try ExecutableIdentity.of(
                spec.role, in: context.scenario.app, root: SimulationRoot(path: context.root), device: spec.device)
            if spec.launchesInBackground { identity.launchedInBackground = true }
            driver = try ProcessDriver(
                name: spec.name, executable: executable.path, arguments: command,
                environment: identity.environment(over: environment, control: .socket(listener.path)), directory: folder,
                transport: .channel, context: context, ownGroup: true)
        } else {
            let control = listener.map { ["--control-socket", $0.path] } ?? []
            driver = try ProcessDriver(
                name: spec.name, executable: context.binaries + "/groupsim",
                arguments: try execArguments(spec) + control + ["--", executable.path] + command, environment: environment,
                directory: folder, transport: listener == nil ? .none : .channel, context: context, ownGroup: true)
            try waitUntilReplaced(driver, executable: executable)
        }
        guard let listener else { return driver }
        try connect(driver, to: listener, executable: executable)
        return driver
    }

    /// `groupsim exec`'s options for `spec`, up to the control channel's.
    private func execArguments(_ spec: ProcessSpec) throws -> [String] {
        let app = context.scenario.app
        guard let bundle = (app.targets[.mainApp] ?? app.targets[spec.role])?.bundleIdentifier else {
            throw ScenarioRunError.check("the app \(app.name) has no \(spec.role.rawValue) target")
        }
        return [
            "exec", "--root", context.root, "--device", spec.device, "--app", bundle, "--target", AppTarget(role: spec.role).rawValue,
            "--manifest", try manifestForExecutables(),
        ] + (spec.launchesInBackground ? ["--background"] : [])
    }

    /// Waits until the executable connected to its control channel, and attaches it.
    private func connect(_ driver: ProcessDriver, to listener: LineSocketListener, executable: ExecutableSpec) throws {
        // Accepted in short slices, so a program that exits at start is seen at once rather than at the deadline.
        let deadline = Date().addingTimeInterval(executable.startTimeout)
        while driver.isRunning, Date() < deadline {
            if let connection = try? listener.accept(timeout: 0.1, handler: driver.channelHandler) {
                driver.attach(connection)
                return
            }
        }
        // It may have connected, said all it had to and exited between two slices: its connection waits to be taken.
        guard driver.isRunning else {
            if let connection = try? listener.accept(timeout: 0, handler: driver.channelHandler) { driver.attach(connection) }
            // Or it exited first: the wait for its ready event says so, with its last lines.
            return
        }
        driver.signal(SIGKILL)
        throw ScenarioRunError.check(
            "\(driver.name) (\(executable.path)) did not connect to its control channel within \(executable.startTimeout) s (its start-timeout); "
                + "an executable that links SimulatedFoundation connects as it loads (say control: false for one that should not)"
                + driver.lastLines)
    }

    /// Waits until `groupsim exec` has made the child the executable: only
    /// then is it tied to the runner's life (`OwnerLifetime`), so a step right
    /// after the launch (a `suspend`, say) cannot catch it before that.
    private func waitUntilReplaced(_ driver: ProcessDriver, executable: ExecutableSpec) throws {
        let starter = context.binaries + "/groupsim"
        let deadline = Date().addingTimeInterval(executable.startTimeout)
        while driver.isRunning {
            let running = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(driver.process.pid)/exe")
            guard let running, (running as NSString).resolvingSymlinksInPath == (starter as NSString).resolvingSymlinksInPath else { return }
            guard Date() < deadline else {
                driver.signal(SIGKILL)
                throw ScenarioRunError.check(
                    "\(driver.name): groupsim exec did not start \(executable.path) within \(executable.startTimeout) s (its start-timeout)")
            }
            usleep(1_000)
        }
    }

    private var socketCount = 0
    private var writtenManifest: String?

    /// The app's manifest as a file `groupsim exec` reads: the scenario's, or the built-in example written into the run's root.
    private func manifestForExecutables() throws -> String {
        if let path = context.manifestPath { return path }
        return try lock.withLock {
            if let writtenManifest { return writtenManifest }
            let path = context.root + "/example-app.yaml"
            try AppManifest.exampleYAML.write(toFile: path, atomically: true, encoding: .utf8)
            writtenManifest = path
            return path
        }
    }

    /// A fresh socket path in the run's root (short: a Unix socket path has at most 107 bytes).
    private func nextSocketPath() -> String {
        let number = lock.withLock { () -> Int in
            socketCount += 1
            return socketCount
        }
        return context.root + "/control-\(number).sock"
    }

    /// `backgroundReason`: the system launches it in the background for that
    /// (an in-app intent), said in its events (`--background`) and the log.
    /// `prewarm`: the system starts it ahead of time (`--prewarm`), and nothing waits for it to come up.
    func launch(_ name: String, arguments override: [String]? = nil, backgroundReason: String? = nil, prewarm: Bool = false) throws {
        let spec = context.scenario.processes[name]!
        if let existing = lock.withLock({ drivers[name] }), existing.isRunning {
            throw ScenarioRunError.check("\(name) is already running")
        }
        let launchArguments = override ?? spec.arguments
        context.log.openLane(name)
        let what = spec.executable.map { ($0.path as NSString).lastPathComponent + " as " + spec.role.rawValue } ?? spec.role.rawValue
        context.log.record(
            process: name, kind: .action, name: "launch",
            fields: backgroundReason == nil ? (prewarm ? ["prewarm": .bool(true)] : [:]) : ["background": .bool(true)],
            text: "launch \(what)" + (backgroundReason.map { " in the background \($0)" } ?? "") + (prewarm ? " ahead of time (prewarm)" : "")
                + (launchArguments.isEmpty ? "" : " -- " + launchArguments.joined(separator: " ")))
        let flags = (backgroundReason == nil && !spec.launchesInBackground ? [] : ["--background"]) + (prewarm ? ["--prewarm"] : [])
        let driver = try start(name, arguments: launchArguments, flags: flags)
        lock.withLock {
            drivers[name] = driver
            everStarted[name] = driver
        }
        // Without a control channel, started is ready; a prewarmed app may wait for the first unlock.
        guard spec.hasControlChannel, !prewarm else { return }
        let startUp = spec.executable?.startTimeout ?? RunnerTimeouts.startUp
        _ = try driver.waitFor(EventMatcher(event: "ready"), timeout: startUp)
        // Answering a request means its start-up (a widget's timeline too) is done.
        do {
            try driver.request(.ping, timeout: spec.executable?.startTimeout ?? RunnerTimeouts.request)
        } catch let failure as ScenarioRunError {
            // A one-shot (an executable that does its work and exits) may end before or after it answers: its channel
            // closes as it exits, so whether the answer came first is a race, and no verdict. One that has exited
            // was launched; its status and output are for the steps after (`wait: { for: exit }`, `expect`).
            guard spec.executable != nil, driver.channelClosed || !driver.isRunning,
                let status = driver.waitForExit(timeout: RunnerTimeouts.exit)
            else { throw failure }
            context.log.record(
                process: name, kind: .action, name: "launched",
                text: "exited with status \(status) as it started (a one-shot); its status and output are for the steps after")
        }
    }

    /// Starts a user's one-shot intent executable (`exec:` with `target: intent`) for one intent: `words` (the intent's
    /// name and parameters, then launch arguments) follow its `exec` list. Nothing waits for it: the caller waits for its exit.
    func launchOneShot(_ name: String, words: [String]) throws -> ProcessDriver {
        if let existing = lock.withLock({ drivers[name] }), existing.isRunning {
            throw ScenarioRunError.check("\(name) is still running (an intent step starts a one-shot process once per intent; quit or kill it first)")
        }
        context.log.openLane(name)
        context.log.record(process: name, kind: .action, name: "launch", text: "launch \(name) for one intent: \(words.joined(separator: " "))")
        let driver = try start(name, arguments: words)
        lock.withLock {
            drivers[name] = driver
            everStarted[name] = driver
        }
        return driver
    }

    /// Starts a process that must not come up: it exits with `status`, saying `message`.
    func launchExpectingFailure(_ name: String, message: String, status expected: Int32) throws {
        let spec = context.scenario.processes[name]!
        context.log.openLane(name)
        context.log.record(process: name, kind: .action, name: "launch", text: "launch \(name), which must fail")
        let driver = try start(name, arguments: spec.arguments)
        lock.withLock { everStarted[name] = driver }
        let status: Int32
        if let executable = spec.executable {
            // A user's executable is judged by its exit alone: one that links SimulatedFoundation says `ready`
            // as it loads, before its own code has run (and decided to fail).
            guard let exited = driver.waitForExit(timeout: executable.startTimeout) else {
                driver.signal(SIGKILL)
                throw ScenarioRunError.check(
                    "\(name) was still running \(Self.seconds(executable.startTimeout)) s after it started (its start-timeout); "
                        + "it should have exited with status \(expected), saying \(PlistJSON.quote(message))\(driver.lastLines)")
            }
            status = exited
        } else {
            // Ready means a built-in role came up: no need to wait for an exit that will not come.
            if (try? driver.waitFor(EventMatcher(event: "ready"), timeout: RunnerTimeouts.startUp)) != nil {
                driver.signal(SIGKILL)
                throw ScenarioRunError.check("\(name) started and kept running; it should have failed with \(PlistJSON.quote(message))")
            }
            guard let exited = driver.waitForExit(timeout: RunnerTimeouts.startUp) else {
                driver.signal(SIGKILL)
                throw ScenarioRunError.check(
                    "\(name) neither came up nor exited within \(Int(RunnerTimeouts.startUp)) s; it should have failed with \(PlistJSON.quote(message))"
                )
            }
            status = exited
        }
        let errors =
            driver.recordedEvents().compactMap { event -> String? in
                if case .error(let text)? = event.appEvent { text } else { nil }
            } + driver.keptOutput().lines.filter { $0.stream == .stderr }.map(\.text)
        guard status == expected else {
            throw ScenarioRunError.check(
                "\(name) exited with status \(status), expected \(expected)" + (errors.isEmpty ? "" : ": " + errors.joined(separator: " "))
                    + driver.lastLines)
        }
        guard errors.contains(where: { $0.contains(message) }) else {
            throw ScenarioRunError.check(
                "\(name) failed as expected, but did not say \(PlistJSON.quote(message)); it said: \(errors.joined(separator: " "))")
        }
    }

    /// Seconds as a failure says them: 20, or 1.5.
    private static func seconds(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }

    /// A process that exited or was killed starts again; a running one is quit first.
    func restart(_ name: String, arguments: [String]?) throws {
        guard lock.withLock({ everStarted[name] }) != nil else {
            throw ScenarioRunError.check("\(name) was never launched: use launch, not restart")
        }
        if lock.withLock({ drivers[name] })?.isRunning == true { try quit(name) }
        try launch(name, arguments: arguments)
    }

    func quit(_ name: String) throws {
        let target = try driver(name)
        let how = target.quitDescription
        context.log.record(process: name, kind: .action, name: "quit", text: "quit (\(how))")
        guard target.quit(timeout: RunnerTimeouts.exit) != nil else {
            throw ScenarioRunError.check("\(name) did not exit within \(Int(RunnerTimeouts.exit)) s after it was asked to quit (\(how))")
        }
    }

    func endAll() {
        let all = lock.withLock { Array(drivers.values) }
        for driver in all { driver.end() }
    }

    /// A device's reboot ends every process running on it (each saves what it wrote, as cfprefsd holds an app's
    /// writes on a device); the timeline says why. What launches next meets the rebooted device.
    func endAll(on device: String, because reason: String) {
        let running = lock.withLock { drivers.filter { context.scenario.processes[$0.key]?.device == device && $0.value.isRunning } }
        for (name, driver) in running.sorted(by: { $0.key < $1.key }) {
            context.log.record(process: name, kind: .action, name: "ended", text: "ended by \(reason)")
            driver.end()
        }
    }
}
