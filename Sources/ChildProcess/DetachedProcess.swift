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
    struct SpawnError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Returns the child's pid. `log` gets its standard output and error:
    /// appended to, or truncated first; a link there is refused (O_NOFOLLOW).
    package static func start(
        _ executable: String, _ arguments: [String], log: String, appending: Bool, newSession: Bool, environment: [String: String]? = nil
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_NOFOLLOW | (appending ? O_APPEND : O_TRUNC), 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc 2.34 and later (not in Swift's view of spawn.h): every other descriptor closed in the child at once.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            throw SpawnError(
                description: "cannot start \(executable): this C library lacks posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)")
        }
        _ = unsafeBitCast(closeFrom, to: AddCloseFrom.self)(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var nothingBlocked = sigset_t()
        sigemptyset(&nothingBlocked)
        posix_spawnattr_setsigmask(&attributes, &nothingBlocked)
        // POSIX_SPAWN_SETSID is glibc's 0x80 (not exported to Swift).
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | (newSession ? 0x80 : 0)))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        // Detached: never tied to the starter's life (OwnerLifetime), whatever the starter was given.
        var environment = environment ?? ProcessInfo.processInfo.environment
        environment[OwnerLifetime.variable] = nil
        let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for word in argv + variables { free(word) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, variables)
        guard result == 0 else { throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(result)))") }
        return pid
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
