import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `posix_spawn` of a program that must not inherit what its starter's
/// threads have: no signal blocked (Foundation's `Process` starts every child
/// with all of them blocked), with `defaultActions` every signal's action the
/// default (the starter ignores SIGPIPE), no descriptor but 0, 1 and 2 (set up
/// by `streams`), and, if asked, a working folder, a session or a process group of its own.
enum CleanSpawn {
    /// `directory`: the child's working folder (nil or "": the starter's); a relative `executable` is found from there.
    /// `newGroup`: the child leads a process group of its own (its id is the child's pid), which `ProcessGroup` signals.
    static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil, newSession: Bool = false,
        newGroup: Bool = false, defaultActions: Bool = false, streams: (inout posix_spawn_file_actions_t) -> Void
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        streams(&actions)
        if let directory, !directory.isEmpty {
            // glibc 2.29 and later (not in Swift's view of spawn.h either).
            typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
            guard let addChdir = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else {
                throw ChildProcessError.missingLibraryFunction(
                    executable: executable, directory: directory, function: "posix_spawn_file_actions_addchdir_np", requirement: nil)
            }
            _ = unsafeBitCast(addChdir, to: AddChdir.self)(&actions, directory)
        }
        // glibc 2.34 and later (not in Swift's view of spawn.h): every other descriptor closed in the child at once.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            throw ChildProcessError.missingLibraryFunction(
                executable: executable, directory: nil, function: "posix_spawn_file_actions_addclosefrom_np", requirement: "glibc 2.34 or later")
        }
        _ = unsafeBitCast(closeFrom, to: AddCloseFrom.self)(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var nothingBlocked = sigset_t()
        sigemptyset(&nothingBlocked)
        posix_spawnattr_setsigmask(&attributes, &nothingBlocked)
        var every = sigset_t()
        sigfillset(&every)
        posix_spawnattr_setsigdefault(&attributes, &every)
        // Group 0: the child's own pid.
        if newGroup { posix_spawnattr_setpgroup(&attributes, 0) }
        // POSIX_SPAWN_SETSID is glibc's 0x80 (not exported to Swift).
        let flags =
            POSIX_SPAWN_SETSIGMASK | (defaultActions ? POSIX_SPAWN_SETSIGDEF : 0) | (newSession ? 0x80 : 0) | (newGroup ? POSIX_SPAWN_SETPGROUP : 0)
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for word in argv + variables { free(word) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, variables)
        guard result == 0 else {
            throw ChildProcessError.spawnFailed(executable: executable, directory: directory, errno: result)
        }
        return pid
    }

    /// Waits for `pid` to end (on the caller's thread, which it blocks) without
    /// reaping it: until `waitForEnd` does, it stays a zombie, so its pid, and
    /// the id of a group it leads, are no other process's. False if it is not
    /// this process's child to wait for (someone else reaped it).
    static func waitUntilEnded(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    /// Waits for `pid` to end and reaps it (on the caller's thread, which it blocks).
    static func waitForEnd(of pid: pid_t) -> RunningProcess.Termination? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return nil }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, macros Swift does not import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}
