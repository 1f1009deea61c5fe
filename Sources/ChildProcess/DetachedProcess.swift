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
    typealias SpawnError = CleanSpawn.SpawnError

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
}
