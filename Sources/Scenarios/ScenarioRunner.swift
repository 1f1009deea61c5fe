import AppModel
import AppProtocol
import ChildProcess
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import ScenarioModel
import SharedFiles
import SimulationValues

/// The outcome of one run of one scenario.
package struct ScenarioResult: Sendable {
    package let scenario: Scenario
    package let failure: ScenarioRunError?
    package let duration: Double
    package let events: [RecordedEvent]
    /// The processes in lane order (first appearance).
    package let lanes: [String]
    /// The run's simulation root (gone after the run unless the runner keeps roots).
    package let root: String
    package var passed: Bool { failure == nil }
}

/// Runs scenarios, each in a fresh simulation root, with real processes;
/// every process it started is ended when the scenario ends, passed or not.
package struct ScenarioRunner: Sendable {
    /// Where main-app, widget, intent-extension and groupsim are.
    package let binaries: String
    /// Keep each scenario's simulation root (for inspection) instead of deleting it.
    package let keepRoots: Bool
    /// What starts the scenario's processes: real ones, or (in the runner's unit tests) scripted ones.
    let processes: any ProcessLauncher
    /// What the waits, pauses and the log's times count on.
    let clock: any RunnerClock

    package init(binaries: String, keepRoots: Bool = false) {
        self.init(binaries: binaries, keepRoots: keepRoots, processes: RealProcesses(), clock: SystemRunnerClock())
    }

    /// A runner whose processes and time are `processes`' and `clock`'s (the runner's unit tests give scripted ones).
    package init(binaries: String, keepRoots: Bool = false, processes: any ProcessLauncher, clock: any RunnerClock) {
        self.binaries = binaries
        self.keepRoots = keepRoots
        self.processes = processes
        self.clock = clock
    }

    /// The executables a run starts, all in one folder.
    package static let executables = ["main-app", "widget", "intent-extension", "groupsim"]

    /// The folder holding `executables`: `$GROUPSIM_BIN_DIR`, else the folder
    /// of the running executable itself (read from /proc/self/exe, so a
    /// `groupsim` found through PATH or a symlink works from any folder).
    /// Throws, naming the folder, when one of them is not there.
    package static func defaultBinaries() throws -> String {
        let folder: String
        let origin: String
        if let override = SimulationEnvironment.current.nonEmpty(SimulationEnvironment.Name.binDir) {
            (folder, origin) = (override, "in $GROUPSIM_BIN_DIR (\(override))")
        } else {
            guard let me = ownExecutablePath() else {
                throw ScenarioRunError.setup(
                    "cannot tell where groupsim's own executable is (/proc/self/exe is unreadable); "
                        + "set GROUPSIM_BIN_DIR to the folder that holds main-app, widget and intent-extension")
            }
            folder = (me as NSString).deletingLastPathComponent
            origin = "beside groupsim in \(folder)"
        }
        for name in executables where !FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
            throw ScenarioRunError.setup(
                "cannot find \(name) \(origin); build every product (swift build) or set GROUPSIM_BIN_DIR "
                    + "to the folder that holds \(executables.joined(separator: ", "))")
        }
        return folder
    }

    package func run(_ scenario: Scenario) -> ScenarioResult {
        let started = clock.now()
        var failure: ScenarioRunError? = nil
        let warden: Warden?
        do { warden = try processes.warden(groupsim: binaries + "/groupsim") } catch {
            warden = nil
            failure = .step(line: 0, step: "setup", message: "\(error)")
        }
        let execution = Execution(scenario: scenario, binaries: binaries, warden: warden, processes: processes, clock: clock)
        // Removed by the warden should this process end before it removes it itself (kill -9 included).
        if !keepRoots { warden?.watch(folder: execution.root) }
        if failure == nil {
            do {
                try LiveProcesses.shared.checkNotInterrupted()
                try execution.prepare()
                for step in scenario.steps { try execution.perform(step) }
            } catch let stop as ScenarioRunError where stop.isStep {
                failure = stop
            } catch {
                failure = .step(line: 0, step: "setup", message: "\(error)")
            }
        }
        // A step in progress when SIGINT or SIGTERM came failed because its processes were killed: say so.
        if let stop = failure, let signal = LiveProcesses.shared.interruption, !stop.message.hasPrefix(LiveProcesses.interruptedPrefix) {
            failure = .step(
                line: stop.line, step: stop.step,
                message:
                    "\(LiveProcesses.interruptedPrefix) by \(LiveProcesses.describe(signal)), which ended the scenario's processes; then: \(stop.message)"
            )
        }
        execution.endAll()
        if !keepRoots {
            try? FileManager.default.removeItem(atPath: execution.root)
            // One that could not be removed (a process that left its group still writing there) is the warden's when this process ends.
            if !FileManager.default.fileExists(atPath: execution.root) { warden?.release(folder: execution.root) }
        }
        return ScenarioResult(
            scenario: scenario, failure: failure, duration: Double(clock.now() - started) / 1e9,
            events: execution.log.all, lanes: execution.lanes, root: execution.root)
    }
}

/// The warden (`Warden`, `groupsim warden`) of every scenario this process
/// runs, started with the first: should this process be killed (`kill -9`),
/// or exit mid-run (an interrupted run that did not wind down in time), it
/// ends the process groups of the scenarios' own programs (what they started;
/// the programs themselves and the built-in roles end through `OwnerLifetime`)
/// and removes the scenarios' roots.
enum RunWarden {
    private static let holder = Holder()

    /// The process's warden, started from `groupsim` on the first call.
    static func shared(groupsim: String) throws -> Warden {
        try holder.lock.withLock {
            if let warden = holder.warden { return warden }
            do {
                let warden = try Warden(executable: groupsim, arguments: ["warden"])
                holder.warden = warden
                return warden
            } catch {
                throw ScenarioRunError.setup(
                    "cannot start the run's warden (groupsim warden), which ends what the run started should the run be killed: \(error)")
            }
        }
    }

    /// Unchecked Sendable: `warden` is set once, under `lock`.
    private final class Holder: @unchecked Sendable {
        let lock = Locked()
        var warden: Warden?
    }
}

/// How long the runner waits for what a step sets off, in seconds: bounded,
/// and generous, so that a loaded machine is slow rather than failing.
enum RunnerTimeouts {
    /// A process coming up (ready, then answering a request), or an intent extension's whole run.
    static let startUp: Double = 20
    /// A request's answer.
    static let request: Double = 20
    /// A process taking a line sent to its stdin (`send`), once its pipe is full.
    static let input = StepGrammar.sendTimeout
    /// A process ending after its stdin closed or a signal that ends it.
    static let exit: Double = 10
    /// Acknowledged synchronizes a `kill: { after-acks }` waits for.
    static let acknowledgements: Double = 20
    /// A whole burst's answers.
    static let burst: Double = 120
    /// A `defaults` or `run` command's whole run.
    static let tool: Double = 60
}
