import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a program that must not stay tied to whoever started it (a daemon,
/// a terminal server): it gets no signal blocked (the starter's threads
/// block some, and a child inherits the mask, so it would never see its own
/// children exit or a SIGTERM), no descriptor but standard input from
/// /dev/null and its output in a log (an inherited one, such as the socket
/// Foundation's `Process` uses to learn that a child exited, would hold up
/// whoever waits on it for as long as the daemon lives), and, if asked, a
/// session of its own (it outlives the starter's terminal).
package enum DetachedProcess {
    /// Returns the child's pid. `log` gets its standard output and error:
    /// appended to, or truncated first; a link there is refused (O_NOFOLLOW).
    package static func start(
        _ executable: String, _ arguments: [String], log: String, appending: Bool, newSession: Bool, environment: [String: String]? = nil
    ) throws -> pid_t {
        // Detached: never tied to the starter's life (OwnerLifetime), whatever the starter was given.
        var environment = environment ?? ProcessInfo.processInfo.environment
        environment[OwnerLifetime.variable] = nil
        return try CleanSpawn.start(executable, arguments, environment: environment, newSession: newSession) { actions in
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_NOFOLLOW | (appending ? O_APPEND : O_TRUNC), 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
    }

    /// Whether `pid`, a child this process started, has exited; it is reaped
    /// then (a detached child is this process's to reap while it lives).
    package static func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid
    }

    /// Sends `signal` to a daemon known only by its pid (one found as a
    /// lock's holder, not necessarily this process's child), if `isStillIt`
    /// holds once the pid is pinned: the pid is opened as a pidfd first, so
    /// a daemon that ended in between is not mistaken for a process that got
    /// its pid since. False if it was not sent. Without pidfds (a C library
    /// before glibc 2.36), the check comes just before a plain `kill`.
    @discardableResult
    package static func signal(_ pid: pid_t, _ signal: Int32, ifStill isStillIt: () -> Bool) -> Bool {
        guard let pidfd = Pidfd.functions else { return isStillIt() && kill(pid, signal) == 0 }
        let descriptor = pidfd.open(pid, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return isStillIt() && pidfd.sendSignal(descriptor, signal, nil, 0) == 0
    }

    /// glibc's pidfd_open and pidfd_send_signal (2.36 and later; not in Swift's view of its headers).
    private enum Pidfd {
        typealias Open = @convention(c) (pid_t, UInt32) -> Int32
        typealias SendSignal = @convention(c) (Int32, Int32, UnsafeMutableRawPointer?, UInt32) -> Int32
        static let functions: (open: Open, sendSignal: SendSignal)? = {
            guard let open = dlsym(nil, "pidfd_open"), let send = dlsym(nil, "pidfd_send_signal") else { return nil }
            return (unsafeBitCast(open, to: Open.self), unsafeBitCast(send, to: SendSignal.self))
        }()
    }
}
