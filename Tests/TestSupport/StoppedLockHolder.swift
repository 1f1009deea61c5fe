import ChildProcess
import Foundation

/// `groupsim-stress hold-lock`, stopped (SIGSTOP) once it holds a domain's
/// lock: every other process's commit of that domain waits for it.
package final class StoppedLockHolder {
    package let process: RunningProcess

    package init(root: TemporaryRoot, domain: String, device: String = "iPhone") throws {
        process = try RunningProcess(
            BuiltExecutable.path("groupsim-stress"), ["hold-lock", "--domain", domain],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": device])
        try process.waitForLine(timeout: 20) { $0 == "holding" }
        process.signal(SIGSTOP)
    }

    package var pid: Int32 { process.pid }

    /// Ends the holder; the kernel releases its lock.
    package func end() throws {
        process.signal(SIGKILL)
        try process.waitForExit()
    }

    deinit { process.kill() }
}
