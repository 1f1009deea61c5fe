import ChildProcess
import Foundation

/// The seam between the runner's logic and real processes: what starts one of
/// a scenario's processes. The runner's steps, waits, checks and judgements
/// see a process only as the lines it writes (to the handlers), its end, and
/// a `LaunchedProcess` to write to and signal; `RealProcesses` starts real
/// children, a test's launcher answers from a script, so the runner's logic
/// has unit tests that start nothing.
package protocol ProcessLauncher: Sendable {
    /// Starts a process; every line it writes and its end go to `handlers`.
    /// - Parameters:
    ///   - launch: What to start, where, with what.
    ///   - handlers: Called with each stdout and stderr line, and once at the end (after the last line).
    /// - Returns: The started process.
    /// - Throws: When it cannot be started (no such executable, no resources).
    func launch(_ launch: ProcessLaunch, handlers: RunningProcess.Handlers) throws -> any LaunchedProcess

    /// The warden of the runs of this process (`RunWarden`), started on the first call; nil when the launcher starts nothing that outlives it.
    /// - Parameter groupsim: The `groupsim` executable that is the warden.
    /// - Returns: The warden, or nil.
    /// - Throws: When it cannot be started.
    func warden(groupsim: String) throws -> Warden?
}

/// What a `ProcessLauncher` starts.
package struct ProcessLaunch: Sendable {
    package var executable: String
    package var arguments: [String]
    package var environment: [String: String]
    /// Its working folder (nil: the runner's).
    package var directory: String?
    /// Plain output is cut into pieces of this many bytes as it arrives (nil: protocol lines, taken whole).
    package var lineLimit: Int?
    /// A user's program: it leads a process group of its own, ended with it (and by `warden`).
    package var ownGroup: Bool
    package var warden: Warden?
}

/// What the runner does to a process it started: write to its stdin, signal
/// it, and make sure what it wrote so far has reached the handlers.
package protocol LaunchedProcess: AnyObject, Sendable {
    var pid: Int32 { get }
    /// Writes a line, waiting for room as long as it takes; false if the process no longer reads.
    @discardableResult func write(_ line: String) -> Bool
    /// Writes bytes, waiting at most `timeout` seconds for the process to take them.
    func write(_ bytes: Data, within timeout: TimeInterval) -> InputWrite
    func closeStdin()
    /// Sends a signal to the process; false once its end was seen.
    @discardableResult func signal(_ signal: Int32) -> Bool
    /// Sends a signal to the process's group (the process alone if it has none); false once its end was seen.
    @discardableResult func signalGroup(_ signal: Int32) -> Bool
    /// SIGSTOP, returning once the process is stopped; false if it ended or was not seen stopped within `timeout`.
    @discardableResult func stop(timeout: TimeInterval) -> Bool
    /// Whether everything the process had written when called has reached the handlers within `timeout`.
    func catchUpOutput(timeout: TimeInterval) -> Bool
}

extension RunningProcess: LaunchedProcess {}
