import ChildProcess
import Foundation

/// The launcher a run uses outside unit tests: real children (`RunningProcess`),
/// each known to `LiveProcesses`, so an interrupted run ends them.
package struct RealProcesses: ProcessLauncher {
    package init() {}

    package func launch(_ launch: ProcessLaunch, handlers: RunningProcess.Handlers) throws -> any LaunchedProcess {
        let process = try RunningProcess(
            launch.executable, launch.arguments, environment: launch.environment, directory: launch.directory, handlers: handlers,
            keepsOutput: false, lineLimit: launch.lineLimit, ownGroup: launch.ownGroup, warden: launch.warden)
        LiveProcesses.shared.add(process)
        return process
    }

    package func warden(groupsim: String) throws -> Warden? { try RunWarden.shared(groupsim: groupsim) }
}
