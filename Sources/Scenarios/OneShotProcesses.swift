import AppModel
import AppProtocol
import ChildProcess
import CloudDevice
import Foundation
import PropertyList
import ScenarioModel
import SimulationValues

/// The processes a step runs to their end for a verdict: the intent
/// extension, `groupsim defaults`, and a scenario's own commands (`run`).
struct OneShotProcesses {
    let context: RunContext

    func runIntent(_ intent: IntentStep, device: String, step: Step) throws {
        let name = intent.name
        let lane = "intent \(name)"
        let scenario = context.scenario
        context.log.openLane(lane)
        context.log.record(
            process: lane, kind: .action, name: "intent",
            fields: scenario.app.targets[.intentExtension]?.intents[name].map { ["key": .string($0.key)] } ?? [:], text: step.summary)
        var all = context.commonArguments(device: device) + [name] + intent.parameters.keys.sorted().map { "\($0)=\(intent.parameters[$0]!)" }
        if !intent.arguments.isEmpty { all += ["--"] + intent.arguments }
        let driver = try ProcessDriver(
            name: lane, executable: context.binaries + "/intent-extension", arguments: all, environment: [CloudDaemons.autostartVariable: "0"],
            transport: .standardStreams, context: context)
        driver.process.closeStdin()
        guard let status = driver.waitForExit(timeout: RunnerTimeouts.startUp) else {
            driver.signal(SIGKILL)
            throw ScenarioRunError.check("the intent extension did not exit within \(Int(RunnerTimeouts.startUp)) s")
        }
        try IntentVerdict(intent: intent, where: "the intent extension").judgeOneShot(
            status: status, events: driver.recordedEvents(), standardError: driver.standardError)
    }

    func runDefaults(_ arguments: [String], status: Int32, output: String?) throws {
        try runForVerdict(
            context.binaries + "/groupsim", ["defaults"] + arguments, lane: "defaults", status: status, output: output, ownGroup: false)
    }

    /// A bare name is looked up on PATH, as a shell would; a path is taken from the scenario's folder.
    /// What it starts in the background ends with it (`ProcessDriver`'s `ownGroup`).
    func runCommand(_ arguments: [String], status: Int32, output: String?) throws {
        let executable = arguments[0].contains("/") ? arguments[0] : Self.onPath(arguments[0], first: context.binaries) ?? arguments[0]
        try runForVerdict(executable, Array(arguments.dropFirst()), lane: "run", status: status, output: output, ownGroup: true)
    }

    /// Runs a tool to its end in the scenario file's folder (relative paths
    /// are the file's), with the root and default device in its environment,
    /// and the folder of the runner's own executables first on its PATH and
    /// in GROUPSIM_BINARIES (a script calls `groupsim` of the same build);
    /// its status and output go to the log and the report.
    private func runForVerdict(
        _ executable: String, _ arguments: [String], lane: String, status expected: Int32, output: String?, ownGroup: Bool
    ) throws {
        let folder = (context.scenario.file as NSString).deletingLastPathComponent
        let path = [context.binaries, ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"].joined(separator: ":")
        let environment = [
            SimulationEnvironment.Name.root: context.root, SimulationEnvironment.Name.device: context.scenario.defaultDevice,
            SimulationEnvironment.Name.binaries: context.binaries, "PATH": path,
        ]
        let process = try RunningProcess(
            executable, arguments, environment: environment,
            directory: folder.isEmpty ? nil : folder, ownGroup: ownGroup, warden: ownGroup ? context.warden : nil)
        LiveProcesses.shared.add(process)
        process.closeStdin()
        let status: Int32
        do { status = try process.waitForExit(timeout: RunnerTimeouts.tool) } catch {
            process.signalGroup(SIGKILL)
            throw ScenarioRunError.check("\(lane) \(executable) did not finish within \(Int(RunnerTimeouts.tool)) s")
        }
        while (try? process.nextLine(timeout: 5)) != nil {}
        let stdout = process.allLines.joined(separator: "\n")
        let stderr = process.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        context.log.record(
            process: lane, kind: .exit, name: "exit", fields: ["status": .integer(Int64(status)), "stdout": .string(stdout)],
            text: "exit \(status)" + (stdout.isEmpty ? "" : "; printed: " + stdout.prefix(300))
                + (stderr.isEmpty ? "" : "; stderr: " + stderr.prefix(300)))
        let name = (executable as NSString).lastPathComponent
        guard status == expected else {
            throw ScenarioRunError.check(
                "\(lane) \(name) exited with status \(status), expected \(expected)"
                    + (stderr.isEmpty ? "" : ": \(stderr)") + (stdout.isEmpty ? "" : " (printed: \(stdout.prefix(300)))"))
        }
        if let output, !stdout.contains(output) {
            throw ScenarioRunError.check(
                "\(lane) \(name) should have printed \(PlistJSON.quote(output)), it printed: \(stdout.isEmpty ? "nothing" : String(stdout.prefix(500)))"
            )
        }
    }

    /// `first`: a folder looked in before PATH's (the runner's own executables, for a `run` step).
    static func onPath(_ name: String, first: String? = nil) -> String? {
        let folders =
            (first.map { [$0] } ?? []) + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// An intent step's `result`: the value the intent must report having stored
/// (`reported`: nil when it reported nothing).
func checkIntentResult(_ name: String, expected: PlistValue??, reported: PlistValue??) throws {
    guard let expected else { return }
    guard let reported, reported == expected else {
        throw ScenarioRunError.check(
            "intent \(name) should have stored \(showValue(expected)), it reported \(reported.map { showValue($0) } ?? "no result")")
    }
}

/// A value as reports show it: its JSON, or "absent".
func showValue(_ value: PlistValue?) -> String { value.map { PlistJSON.encode($0) } ?? "absent" }
