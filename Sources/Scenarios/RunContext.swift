import ChildProcess
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
    /// Ends the process groups of the scenario's own programs, and removes the root, should the runner be killed
    /// (nil: it could not be started, and the scenario fails at its setup; or the processes are scripted).
    let warden: Warden?
    /// What starts the scenario's processes (the clock is the log's).
    let processes: any ProcessLauncher

    var clock: any RunnerClock { log.clock }

    /// The arguments every simulated process of the run gets.
    func commonArguments(device: String) -> [String] {
        ["--json", "--root", root, "--device", device] + (manifestPath.map { ["--manifest", $0] } ?? [])
    }
}
