import ChildProcess
import Foundation
import SharedFiles
import GroupDefaults
import PropertyList
import AppModel
import AppProtocol
import ScenarioModel

/// The outcome of one run of one scenario.
public struct ScenarioResult: Sendable {
    public let scenario: Scenario
    public let failure: StepFailure?
    public let duration: Double
    public let events: [RecordedEvent]
    /// The processes in lane order (first appearance).
    public let lanes: [String]
    public var passed: Bool { failure == nil }
}

/// Why a run cannot start at all.
public struct RunnerSetupError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Runs scenarios, each in a fresh simulation root, with real processes;
/// every process it started is ended when the scenario ends, passed or not.
public struct ScenarioRunner: Sendable {
    /// Where main-app, widget, intent-extension and groupsim are.
    public let binaries: String
    /// Keep each scenario's simulation root (for inspection) instead of deleting it.
    public let keepRoots: Bool

    public init(binaries: String, keepRoots: Bool = false) {
        self.binaries = binaries
        self.keepRoots = keepRoots
    }

    /// The executables a run starts, all in one folder.
    public static let executables = ["main-app", "widget", "intent-extension", "groupsim"]

    /// The folder holding `executables`: `$GROUPSIM_BIN_DIR`, else the folder
    /// of the running executable itself (read from /proc/self/exe, so a
    /// `groupsim` found through PATH or a symlink works from any folder).
    /// Throws, naming the folder, when one of them is not there.
    public static func defaultBinaries() throws -> String {
        let folder: String, origin: String
        if let override = ProcessInfo.processInfo.environment["GROUPSIM_BIN_DIR"], !override.isEmpty {
            (folder, origin) = (override, "in $GROUPSIM_BIN_DIR (\(override))")
        } else {
            guard let me = ownExecutablePath() else {
                throw RunnerSetupError("cannot tell where groupsim's own executable is (/proc/self/exe is unreadable); "
                    + "set GROUPSIM_BIN_DIR to the folder that holds main-app, widget and intent-extension")
            }
            folder = (me as NSString).deletingLastPathComponent
            origin = "beside groupsim in \(folder)"
        }
        for name in executables where !FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
            throw RunnerSetupError("cannot find \(name) \(origin); build every product (swift build) or set GROUPSIM_BIN_DIR "
                + "to the folder that holds \(executables.joined(separator: ", "))")
        }
        return folder
    }

    public func run(_ scenario: Scenario) -> ScenarioResult {
        let started = Date()
        let execution = Execution(scenario: scenario, binaries: binaries)
        var failure: StepFailure? = nil
        do {
            try LiveProcesses.shared.checkNotInterrupted()
            try execution.prepare()
            for step in scenario.steps { try execution.perform(step) }
        } catch let stop as StepFailure {
            failure = stop
        } catch {
            failure = StepFailure(line: 0, step: "setup", message: "\(error)")
        }
        // A step in progress when SIGINT or SIGTERM came failed because its processes were killed: say so.
        if let stop = failure, let signal = LiveProcesses.shared.interruption, !stop.message.hasPrefix(LiveProcesses.interruptedPrefix) {
            failure = StepFailure(
                line: stop.line, step: stop.step,
                message: "\(LiveProcesses.interruptedPrefix) by \(LiveProcesses.describe(signal)), which ended the scenario's processes; then: \(stop.message)")
        }
        execution.endAll()
        if !keepRoots { try? FileManager.default.removeItem(atPath: execution.root) }
        return ScenarioResult(
            scenario: scenario, failure: failure, duration: Date().timeIntervalSince(started),
            events: execution.log.all, lanes: execution.lanes)
    }
}

/// The state of one scenario run.
final class Execution: @unchecked Sendable {
    let scenario: Scenario
    let binaries: String
    let log = ScenarioLog()
    let root: String
    private let lock = NSLock()
    private var drivers: [String: ProcessDriver] = [:]
    private var everStarted: [String: ProcessDriver] = [:]
    private var laneOrder: [String] = []
    private var manifestPath: String?
    /// The cloud's processes, when the scenario uses the cloud.
    private var cloud: CloudRig?
    /// Bursts running in the background: process → the request id of their last write.
    private var backgroundBursts: [String: Int] = [:]

    init(scenario: Scenario, binaries: String) {
        self.scenario = scenario
        self.binaries = binaries
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-scenario-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        root = made.map { String(cString: $0) } ?? NSTemporaryDirectory() + "/groupsim-scenario-\(getpid())"
    }

    var lanes: [String] { lock.withLock { laneOrder } }

    func prepare() throws {
        switch scenario.appSource {
        case .example: manifestPath = nil
        case .file(let path): manifestPath = path
        case .inline(let yaml):
            let path = root + "/scenario-app.yaml"
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
            manifestPath = path
        }
        for device in scenario.devices { try DeviceManager(root: SimulationRoot(path: root)).create(device) }
        if scenario.usesCloud {
            let rig = CloudRig(root: SimulationRoot(path: root), groupsim: binaries + "/groupsim", log: log)
            lock.withLock { cloud = rig }
            for lane in [CloudRig.serverLane] + scenario.devices.map(CloudRig.agentLane) { self.lane(lane) }
            try rig.start(devices: scenario.deviceSpecs)
        }
    }

    private func cloudRig() throws -> CloudRig {
        guard let rig = lock.withLock({ cloud }) else { throw CheckFailed("this scenario has no cloud") }
        return rig
    }

    private func lane(_ name: String) {
        lock.withLock { if !laneOrder.contains(name) { laneOrder.append(name) } }
    }

    func driver(_ name: String) throws -> ProcessDriver {
        guard let driver = lock.withLock({ drivers[name] }) else {
            throw CheckFailed("\(name) is not running (launch it first)")
        }
        guard driver.isRunning else {
            throw CheckFailed("\(name) has exited (status \(driver.exitStatus.map(String.init) ?? "?")); launch or restart it first")
        }
        return driver
    }

    /// A driver whose process may have exited (for exit checks).
    func lastDriver(_ name: String) throws -> ProcessDriver {
        guard let driver = lock.withLock({ everStarted[name] }) else { throw CheckFailed("\(name) was never launched") }
        return driver
    }

    private func commonArguments(device: String) -> [String] {
        ["--json", "--root", root, "--device", device] + (manifestPath.map { ["--manifest", $0] } ?? [])
    }

    func launch(_ name: String, arguments override: [String]? = nil) throws {
        let spec = scenario.processes[name]!
        if let existing = lock.withLock({ drivers[name] }), existing.isRunning {
            throw CheckFailed("\(name) is already running")
        }
        let launchArguments = override ?? spec.arguments
        lane(name)
        log.record(process: name, kind: .action, name: "launch", text: "launch \(spec.role.rawValue)" + (launchArguments.isEmpty ? "" : " -- " + launchArguments.joined(separator: " ")))
        let driver = try ProcessDriver(
            name: name, executable: binaries + "/" + spec.role.rawValue,
            arguments: commonArguments(device: spec.device) + (launchArguments.isEmpty ? [] : ["--"] + launchArguments), log: log)
        lock.withLock {
            drivers[name] = driver
            everStarted[name] = driver
        }
        _ = try driver.waitFor(EventMatcher(event: "ready"), timeout: 20)
        // Answering a request means its start-up (a widget's timeline too) is done.
        try driver.request(.ping, timeout: 20)
    }

    /// Starts a process that must not come up: it exits with `status`, saying `message`.
    private func launchExpectingFailure(_ name: String, message: String, status expected: Int32) throws {
        let spec = scenario.processes[name]!
        lane(name)
        log.record(process: name, kind: .action, name: "launch", text: "launch \(spec.role.rawValue), which must fail")
        let driver = try ProcessDriver(
            name: name, executable: binaries + "/" + spec.role.rawValue,
            arguments: commonArguments(device: spec.device) + (spec.arguments.isEmpty ? [] : ["--"] + spec.arguments), log: log)
        lock.withLock { everStarted[name] = driver }
        // Ready means it came up: no need to wait for an exit that will not come.
        if (try? driver.waitFor(EventMatcher(event: "ready"), timeout: 20)) != nil {
            driver.signal(SIGKILL)
            throw CheckFailed("\(name) started and kept running; it should have failed with \(PlistJSON.quote(message))")
        }
        guard let status = driver.waitForExit(timeout: 20) else {
            driver.signal(SIGKILL)
            throw CheckFailed("\(name) neither came up nor exited within 20 s; it should have failed with \(PlistJSON.quote(message))")
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

    func endAll() {
        // Marked in the log, so what the processes say from here on reads as the runner ending them.
        log.record(process: "runner", kind: .action, name: "teardown", text: "the runner ends every process it started")
        let all = lock.withLock { Array(drivers.values) }
        for driver in all { driver.end() }
        lock.withLock { cloud }?.endAll()
    }

    // MARK: Steps

    func perform(_ step: Step) throws {
        do {
            // Nothing new starts once the run is stopped.
            try LiveProcesses.shared.checkNotInterrupted()
            try execute(step)
        } catch let failure as StepFailure {
            throw failure
        } catch {
            log.record(process: "runner", kind: .action, name: "failure", text: "\(error)")
            throw StepFailure(line: step.line, step: step.summary, message: "\(error)")
        }
    }

    private func action(_ process: String, _ step: Step, key: String? = nil) {
        lane(process)
        var fields: [String: PlistValue] = [:]
        if let key { fields["key"] = .string(key) }
        log.record(process: process, kind: .action, name: step.keyword, fields: fields, text: step.summary)
    }

    private func execute(_ step: Step) throws {
        switch step.action {
        case .launch(let names):
            for name in names { try launch(name) }
        case .launchFails(let name, let message, let status):
            try launchExpectingFailure(name, message: message, status: status)
        case .waitBurst(let process):
            guard let last = lock.withLock({ backgroundBursts.removeValue(forKey: process) }) else {
                throw CheckFailed("\(process) has no burst running in the background (burst: { …, background: true })")
            }
            _ = try lastDriver(process).waitForResponse(last, timeout: 120)
        case .restart(let process, let arguments):
            // A process that exited or was killed starts again; a running one is quit first.
            guard lock.withLock({ everStarted[process] }) != nil else {
                throw CheckFailed("\(process) was never launched: use launch, not restart")
            }
            if lock.withLock({ drivers[process] })?.isRunning == true { try quit(process) }
            try launch(process, arguments: arguments)
        case .quit(let process):
            try quit(process)
        case .command(let process, let command):
            action(process, step, key: Self.key(of: command))
            try driver(process).request(command, timeout: 20)
        case .intent(let name, let parameters, let device, let status, let arguments, let result):
            try runIntent(name, parameters: parameters, device: device ?? scenario.defaultDevice, expected: status, arguments: arguments,
                          result: result, step: step)
        case .defaults(let arguments, let status, let output):
            action("defaults", step, key: arguments.count > 2 ? arguments[2] : nil)
            try runForVerdict(binaries + "/groupsim", ["defaults"] + arguments, lane: "defaults", status: status, output: output)
        case .run(let arguments, let status, let output):
            action("run", step)
            // A bare name is looked up on PATH, as a shell would; a path is taken from the scenario's folder.
            let executable = arguments[0].contains("/") ? arguments[0] : Self.onPath(arguments[0]) ?? arguments[0]
            try runForVerdict(executable, Array(arguments.dropFirst()), lane: "run", status: status, output: output)
        case .wait(let process, let matcher, let timeout):
            _ = try lastDriver(process).waitFor(matcher, timeout: timeout)
        case .quiet(let process, let matcher, let seconds):
            // The one wait that lasts its whole time by design: "nothing happens within T".
            if let seen = try lastDriver(process).firstNew(matcher, within: seconds) {
                throw CheckFailed("\(process) should have had no \(matcher) for \(seconds) s, but had: \(seen.text)")
            }
        case .kill(let process, let signal, let afterAcks):
            let target = try driver(process)
            if let afterAcks { try target.waitForAcknowledgedSyncs(afterAcks, timeout: 20) }
            action(process, step)
            target.signal(signal)
            if signal == SIGKILL || signal == SIGTERM || signal == SIGINT {
                guard target.waitForExit(timeout: 10) != nil else { throw CheckFailed("\(process) did not exit after the signal") }
            }
        case .suspend(let process):
            action(process, step)
            try driver(process).signal(SIGSTOP)
        case .resume(let process):
            action(process, step)
            try driver(process).signal(SIGCONT)
        case .corrupt(let domain, let device, let content):
            action("files", step, key: nil)
            let path = try DomainFiles(root: SimulationRoot(path: root), device: device ?? scenario.defaultDevice).location(of: domain).path
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            // Replaced by rename, as a careless tool or a bad sync would.
            try Data(content.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        case .deleteFile(let domain, let device):
            action("files", step)
            let path = try DomainFiles(root: SimulationRoot(path: root), device: device ?? scenario.defaultDevice).location(of: domain).path
            try FileManager.default.removeItem(atPath: path)
        case .eraseDevice(let device):
            action("files", step)
            try DeviceManager(root: SimulationRoot(path: root)).erase(device)
        case .burst(let burst):
            action(burst.process, step)
            let target = try driver(burst.process)
            let last = target.startBurst(burst)
            if burst.background {
                lock.withLock { backgroundBursts[burst.process] = last }
            } else if burst.waitForResponses {
                _ = try target.waitForResponse(last, timeout: 120)
            }
        case .parallel(let steps):
            let failures = FailureBox()
            DispatchQueue.concurrentPerform(iterations: steps.count) { index in
                do { try perform(steps[index]) } catch { failures.add(error) }
            }
            if let first = failures.first { throw first }
        case .expect(let checks):
            for item in checks {
                // A failing check is reported at its own line, not the expect's.
                do { try verify(item.check) } catch let failed as CheckFailed {
                    log.record(process: "runner", kind: .action, name: "failure", text: failed.description)
                    throw StepFailure(line: item.line, step: "expect", message: failed.description)
                }
            }
        case .cloud(let cloudAction):
            action(CloudRig.serverLane, step)
            if case .waitForQuiescence = cloudAction {
                // Writes an app made are in its device's copy only once saved: save them first.
                let running = lock.withLock { drivers.values.filter(\.isRunning) }
                for driver in running where scenario.app.targets[scenario.processes[driver.name]?.role ?? .mainApp]?.keyValueStore != nil {
                    if !driver.suspended { try driver.request(.synchronize, timeout: 20) }
                }
            }
            try cloudRig().perform(cloudAction)
        }
    }

    static func key(of command: AppRequest) -> String? {
        switch command {
        case .set(let key, _), .remove(let key), .increment(let key, _), .append(let key, _), .mergeDictionary(let key, _), .get(let key),
             .typedGet(let key, _): key
        case .cloudSet(let key, _), .cloudRemove(let key), .cloudGet(let key): key
        default: nil
        }
    }

    private func quit(_ process: String) throws {
        let target = try driver(process)
        log.record(process: process, kind: .action, name: "quit", text: "quit (stdin closed)")
        if target.suspended { target.signal(SIGCONT) }
        target.process.closeStdin()
        guard target.waitForExit(timeout: 10) != nil else { throw CheckFailed("\(process) did not exit within 10 s after its stdin closed") }
    }

    private func runIntent(_ name: String, parameters: [String: String], device: String, expected: Int32, arguments: [String],
                           result: PlistValue??, step: Step) throws {
        let lane = "intent \(name)"
        self.lane(lane)
        log.record(process: lane, kind: .action, name: "intent", fields: scenario.app.targets[.intentExtension]?.intents[name].map { ["key": .string($0.key)] } ?? [:], text: step.summary)
        var all = commonArguments(device: device) + [name] + parameters.keys.sorted().map { "\($0)=\(parameters[$0]!)" }
        if !arguments.isEmpty { all += ["--"] + arguments }
        let driver = try ProcessDriver(name: lane, executable: binaries + "/intent-extension", arguments: all, log: log)
        driver.process.closeStdin()
        guard let status = driver.waitForExit(timeout: 20) else {
            driver.signal(SIGKILL)
            throw CheckFailed("the intent extension did not exit within 20 s")
        }
        guard status == expected else {
            let error = driver.recordedEvents().lazy.compactMap { event -> String? in
                if case .error(let message)? = event.appEvent { message } else { nil }
            }.first ?? driver.process.stderr
            throw CheckFailed("the intent extension exited with status \(status), expected \(expected): \(error)")
        }
        if let result {
            let reported = driver.recordedEvents().lazy.compactMap { event -> PlistValue?? in
                if case .intentResult(_, _, let value)? = event.appEvent { value } else { nil }
            }.first
            guard let reported, reported == result else {
                throw CheckFailed("intent \(name) should have stored \(Self.show(result)), it reported \(reported.map { Self.show($0) } ?? "no result")")
            }
        }
    }

    /// Runs a tool to its end in the scenario file's folder (relative paths
    /// are the file's), with the root and default device in its environment;
    /// its status and output go to the log and the report.
    private func runForVerdict(_ executable: String, _ arguments: [String], lane: String, status expected: Int32, output: String?) throws {
        let folder = (scenario.file as NSString).deletingLastPathComponent
        let process = try RunningProcess(
            executable, arguments, environment: ["GROUPSIM_ROOT": root, "GROUPSIM_DEVICE": scenario.defaultDevice],
            directory: folder.isEmpty ? nil : folder)
        LiveProcesses.shared.add(process.pid)
        defer { LiveProcesses.shared.remove(process.pid) }
        process.closeStdin()
        let status: Int32
        do { status = try process.waitForExit(timeout: 60) } catch {
            kill(process.pid, SIGKILL)
            throw CheckFailed("\(lane) \(executable) did not finish within 60 s")
        }
        while (try? process.nextLine(timeout: 5)) != nil {}
        let stdout = process.allLines.joined(separator: "\n")
        let stderr = process.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        log.record(process: lane, kind: .exit, name: "exit", fields: ["status": .integer(Int64(status)), "stdout": .string(stdout)],
                   text: "exit \(status)" + (stdout.isEmpty ? "" : "; printed: " + stdout.prefix(300)) + (stderr.isEmpty ? "" : "; stderr: " + stderr.prefix(300)))
        guard status == expected else {
            throw CheckFailed("\(lane) \(((executable as NSString).lastPathComponent)) exited with status \(status), expected \(expected)"
                + (stderr.isEmpty ? "" : ": \(stderr)") + (stdout.isEmpty ? "" : " (printed: \(stdout.prefix(300)))"))
        }
        if let output, !stdout.contains(output) {
            throw CheckFailed("\(lane) \(((executable as NSString).lastPathComponent)) should have printed \(PlistJSON.quote(output)), it printed: \(stdout.isEmpty ? "nothing" : String(stdout.prefix(500)))")
        }
    }

    static func onPath(_ name: String) -> String? {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    // MARK: Checks

    private func verify(_ check: Check) throws {
        switch check {
        case .value(let process, let key, let value, let domain):
            let response = try driver(process).request(.get(key: key))
            let found = response.response?.value, foundDomain = response.response?.domain
            if let value, found != value {
                throw CheckFailed("\(process): \(key) should be \(Self.show(value)), found \(Self.show(found))" + (foundDomain.map { " (from \($0))" } ?? ""))
            }
            if let domain, foundDomain != domain {
                throw CheckFailed("\(process): \(key) should come from \(domain), found \(foundDomain ?? "no domain") (value \(Self.show(found)))")
            }
        case .saw(let process, let matcher, let times):
            let count = try lastDriver(process).recordedEvents().filter(matcher.matches).count
            if let times, count != times {
                throw CheckFailed("\(process) should have seen \(matcher) exactly \(times) time(s), saw it \(count) time(s)")
            }
            guard count > 0 || times == 0 else {
                throw CheckFailed("\(process) should have seen \(matcher), and did not")
            }
        case .notSaw(let process, let matcher):
            if let seen = try lastDriver(process).recordedEvents().first(where: matcher.matches) {
                throw CheckFailed("\(process) should not have seen \(matcher), but saw: \(seen.text)")
            }
        case .card(let process, let expected):
            guard let render = try lastDriver(process).recordedEvents().last(where: { $0.name == "render" }) else {
                throw CheckFailed("\(process) has not rendered")
            }
            let shown = render.appEvent.map(EventMatcher.card(of:)) ?? [:]
            for key in expected.keys.sorted() where (shown[key] ?? nil) != expected[key]! {
                throw CheckFailed("\(process)'s card should show \(key) = \(Self.show(expected[key]!)), it shows \(Self.show(shown[key] ?? nil)) (last render: \(render.text))")
            }
        case .file(let fileCheck):
            try verifyFile(fileCheck)
        case .acknowledged(let process):
            let writes = try lastDriver(process).acknowledgedWrites()
            guard !writes.isEmpty else { throw CheckFailed("\(process) had no acknowledged burst writes to check") }
            let spec = scenario.processes[process]!
            let target = try scenario.app.target(spec.role)
            let files = DomainFiles(root: SimulationRoot(path: root), device: spec.device, app: target.usesStandardDefaults ? target.bundleIdentifier : nil)
            let suite = target.usesStandardDefaults ? target.bundleIdentifier : target.suite
            let contents = try files.read(suite) ?? [:]
            var last: [String: PlistValue] = [:]
            for write in writes { last[write.key] = write.value }
            for (key, value) in last {
                let stored = contents[key]
                let fine = stored == value || {
                    if case .integer(let s)? = stored, case .integer(let v) = value { return s >= v }
                    return false
                }()
                if !fine { throw CheckFailed("\(key) = \(Self.show(value)) was acknowledged (synchronize returned) but the file holds \(Self.show(stored))") }
            }
        case .typedValue(let process, let key, let kind, let value):
            let found = try driver(process).request(.typedGet(key: key, as: kind)).response?.value
            guard found == value else {
                throw CheckFailed("\(process): \(kind.rawValue)(forKey: \(key)) should return \(Self.show(value)), it returns \(Self.show(found))")
            }
        case .cloudValueIn(let process, let key, let value):
            let found = try driver(process).request(.cloudGet(key: key)).response?.value
            guard found == value else {
                throw CheckFailed("\(process)'s iCloud store: \(key) should be \(Self.show(value)), found \(Self.show(found))")
            }
        case .cloud(let cloudCheck):
            try cloudRig().verify(cloudCheck)
        case .searchList(let process, let expected):
            let info = try driver(process).request(.info).response?.fields["info"]?.dictionaryValue
            let found = (info?["searchList"]?.arrayValue ?? []).compactMap(\.stringValue)
            guard found == expected else {
                throw CheckFailed("\(process)'s search list should be \(expected.joined(separator: ", ")), it is \(found.joined(separator: ", "))")
            }
        case .exit(let process, let status):
            let target = try lastDriver(process)
            guard let found = target.waitForExit(timeout: 10) else { throw CheckFailed("\(process) is still running; expected it to have exited with \(status)") }
            guard found == status else { throw CheckFailed("\(process) exited with status \(found), expected \(status)") }
        }
    }

    private func verifyFile(_ check: FileCheck) throws {
        let files = DomainFiles(root: SimulationRoot(path: root), device: check.device ?? scenario.defaultDevice, app: check.app)
        let path = try files.location(of: check.domain).path
        let name = "\(check.domain) file (\(path.replacingOccurrences(of: root, with: "<root>")))"
        if case .movedAside = check.condition {
            let folder = (path as NSString).deletingLastPathComponent, base = (path as NSString).lastPathComponent
            let aside = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(base + ".corrupt-") }
            guard !aside.isEmpty else { throw CheckFailed("no corrupt copy was moved aside beside \(name)") }
            return
        }
        let contents: [String: PlistValue]
        do {
            guard let read = try files.read(check.domain) else { throw CheckFailed("\(name) does not exist") }
            contents = read
        } catch let error as CheckFailed { throw error } catch {
            throw CheckFailed("\(name) is not intact: \(error)")
        }
        switch check.condition {
        case .value(let key, let value):
            guard contents[key] == value else { throw CheckFailed("\(name): \(key) should be \(Self.show(value)), found \(Self.show(contents[key]))") }
        case .absent(let key):
            if let found = contents[key] { throw CheckFailed("\(name): \(key) should be absent, found \(Self.show(found))") }
        case .count(let count):
            guard contents.count == count else { throw CheckFailed("\(name) should hold \(count) keys, holds \(contents.count)") }
        case .countMatching(let pattern, let count):
            let matching = contents.keys.filter { fnmatch(pattern, $0, 0) == 0 }
            guard matching.count == count else {
                throw CheckFailed("\(name) should hold \(count) keys matching \(pattern), holds \(matching.count)")
            }
        case .length(let key, let length):
            guard let array = contents[key]?.arrayValue else { throw CheckFailed("\(name): \(key) should be an array, found \(Self.show(contents[key]))") }
            guard array.count == length else { throw CheckFailed("\(name): \(key) should have \(length) elements, has \(array.count)") }
        case .intact, .movedAside:
            break
        }
    }

    static func show(_ value: PlistValue?) -> String { value.map { PlistJSON.encode($0) } ?? "absent" }
}

final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [Error] = []
    func add(_ error: Error) { lock.withLock { errors.append(error) } }
    var first: Error? { lock.withLock { errors.first } }
}
