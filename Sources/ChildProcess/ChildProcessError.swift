import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Everything that fails in starting, reaching or waiting for a child: what
/// failed, with the path, pid, errno or bound it failed at. `description` is
/// the one place these become text.
package enum ChildProcessError: Error, CustomStringConvertible {
    /// The C library lacks a function a clean start needs (`requirement`: which library has it).
    case missingLibraryFunction(executable: String, directory: String?, function: String, requirement: String?)
    /// `posix_spawn` refused `executable` (started in `directory`, if any) with `errno`.
    case spawnFailed(executable: String, directory: String?, errno: Int32)
    /// The warden's pipe could not be made.
    case wardenPipeFailed(executable: String, errno: Int32)
    /// A Unix socket path longer than `sun_path` holds.
    case socketPathLength(path: String, capacity: Int)
    case socketNotMade(errno: Int32)
    case connectFailed(path: String, errno: Int32)
    case peerUnknown(path: String, errno: Int32)
    /// The socket at `path` is another user's listener.
    case listenerOfAnotherUser(path: String, uid: UInt32, pid: Int32, ownUID: UInt32)
    case listenFailed(path: String, errno: Int32)
    case acceptFailed(path: String, errno: Int32)
    /// No program connected to the control socket at `path` within `seconds`.
    case noConnection(path: String, seconds: TimeInterval)
    /// No line on a control channel within `seconds`.
    case noControlLine(seconds: TimeInterval)
    /// No control-channel line matched within `seconds`; `seen`: its last lines.
    case controlLineNotSeen(seconds: TimeInterval, seen: [String])
    /// No stdout line of a child matched within `seconds`; `seen`: its last lines.
    case lineNotSeen(seconds: TimeInterval, seen: [String], stderr: String)
    /// No stdout line at all within `seconds`; `lastLines`: where the child stopped.
    case noOutputLine(seconds: TimeInterval, lastLines: String, stderr: String)
    case stderrKeptOpen(pid: Int32, seconds: TimeInterval)
    case didNotExit(pid: Int32, seconds: TimeInterval)
    /// A child's output ended before the line `expected` names.
    case outputEnded(expected: String)
    /// A line that is not what `expected` says should have come first.
    case unexpectedLine(expected: String, line: String)

    package var description: String {
        switch self {
        case .missingLibraryFunction(let executable, let directory, let function, let requirement):
            "cannot start \(executable)\(Self.inFolder(directory)): this C library lacks \(function)\(requirement.map { " (\($0))" } ?? "")"
        case .spawnFailed(let executable, let directory, let errno):
            "cannot start \(executable)\(Self.inFolder(directory)): \(Self.reason(errno))"
        case .wardenPipeFailed(let executable, let errno):
            "cannot start the warden \(executable): pipe2: \(Self.reason(errno))"
        case .socketPathLength(let path, let capacity):
            "'\(path)': a Unix socket path must have 1 to \(capacity - 1) bytes; use a shorter folder"
        case .socketNotMade(let errno): "cannot make a socket: \(Self.reason(errno))"
        case .connectFailed(let path, let errno): "cannot connect to '\(path)': \(Self.reason(errno))"
        case .peerUnknown(let path, let errno): "cannot tell who listens at '\(path)': \(Self.reason(errno))"
        case .listenerOfAnotherUser(let path, let uid, let pid, let ownUID):
            "'\(path)' is listened on by user \(uid) (pid \(pid)), not by this user (\(ownUID)): "
                + "another user may have listened there first; nothing was sent to it. \(UnixSocket.privateFolderAdvice)"
        case .listenFailed(let path, let errno): "cannot listen at '\(path)': \(Self.reason(errno))"
        case .acceptFailed(let path, let errno): "accept on '\(path)': \(Self.reason(errno))"
        case .noConnection(let path, let seconds): "no program connected to '\(path)' within \(seconds)s"
        case .noControlLine(let seconds): "no line on the control channel within \(seconds)s"
        case .controlLineNotSeen(let seconds, let seen): "expected line not seen on the control channel within \(seconds)s; seen: \(seen)"
        case .lineNotSeen(let seconds, let seen, let stderr): "expected line not seen within \(seconds)s; seen: \(seen); stderr: \(stderr)"
        case .noOutputLine(let seconds, let lastLines, let stderr):
            "no output line within \(seconds)s; its last lines:\n\(lastLines)\nstderr: \(stderr)"
        case .stderrKeptOpen(let pid, let seconds): "process \(pid) kept stderr open for \(seconds)s"
        case .didNotExit(let pid, let seconds): "process \(pid) did not exit within \(seconds)s"
        case .outputEnded(let expected): "\(expected) not seen before the output ended"
        case .unexpectedLine(let expected, let line): "\(expected): \(line)"
        }
    }

    private static func inFolder(_ directory: String?) -> String { directory.map { " in \($0)" } ?? "" }
    private static func reason(_ errno: Int32) -> String { String(cString: strerror(errno)) }
}
