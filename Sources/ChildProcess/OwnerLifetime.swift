import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child must not outlive the process that started it, however that one
/// ends (`kill -9` included, which no handler of the owner can see): a run's
/// cloud and agents, the apps it drives, a benchmark's observers.
///
/// The owner names itself in `GROUPSIM_OWNER_PID` when it starts the child
/// (`RunningProcess` does, for every child), and the child, first thing in
/// its `main`, calls `adopt()`: the kernel is asked to send it SIGKILL when
/// its parent ends (`PR_SET_PDEATHSIG`). SIGKILL, because it also ends a
/// child that is stopped (a scenario's suspended app) and needs no thread of
/// the child to act. The request is made in the child after `exec` (Foundation
/// starts children with `posix_spawn`, with no hook between fork and exec),
/// so an owner that died before it is found by `getppid()`.
///
/// The kernel's "parent" here is the thread that started the child, not the
/// process: a child started from a thread that ends (a dispatch worker, a
/// scenario's thread) would be killed with that thread. So every child is
/// started from `SpawningThread`, which lives as long as the process.
///
/// Only the child itself is tied: the kernel clears the request in a process
/// it forks. A user's program's own children are ended with its process
/// group instead (`RunningProcess`'s `ownGroup`), and, once the owner was
/// killed, by the owner's `Warden`.
///
/// A daemon meant to outlive its starter (`groupsim cloud start`) is started
/// by `DetachedProcess`, which never passes the variable on, nor does `Warden`.
package enum OwnerLifetime {
    package static let variable = "GROUPSIM_OWNER_PID"

    /// Child side: called first by every executable of the package. Without
    /// the variable it does nothing. The variable is removed from the
    /// environment, so this process's own children are tied to it only if it
    /// names itself again.
    package static func adopt() {
        guard let raw = getenv(variable) else { return }
        let text = String(cString: raw)
        unsetenv(variable)
        guard let owner = pid_t(text), owner > 1 else {
            FileHandle.standardError.write(Data("warning: \(variable)='\(text)' is not a process id; this process is not tied to its starter\n".utf8))
            return
        }
        guard setParentDeathSignal(SIGKILL) else {
            FileHandle.standardError.write(
                Data("warning: cannot ask to end with process \(owner) (prctl PR_SET_PDEATHSIG: \(String(cString: strerror(errno))))\n".utf8))
            return
        }
        if getppid() == owner { return }
        // Started by someone else (a program between the owner and this
        // process passed the variable on): the owner is not our parent.
        guard kill(owner, 0) == -1 && errno == ESRCH else {
            _ = setParentDeathSignal(0)
            return
        }
        // The owner ended before the request was made: end as it would have made us.
        kill(getpid(), SIGKILL)
    }

    /// `prctl(PR_SET_PDEATHSIG, signal)`. prctl is variadic in C, which Swift
    /// cannot call, so it is called through a fixed prototype of its five words.
    private static func setParentDeathSignal(_ signal: Int32) -> Bool {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let symbol = dlsym(nil, "prctl") else { return false }
        let setPdeathsig: Int32 = 1  // PR_SET_PDEATHSIG, <linux/prctl.h>
        return unsafeBitCast(symbol, to: Prctl.self)(setPdeathsig, UInt(signal), 0, 0, 0) == 0
    }
}

/// The one thread that starts every child of `RunningProcess`, for the life
/// of the process (see `OwnerLifetime`: the kernel ties a child's
/// `PR_SET_PDEATHSIG` to the thread that started it). Callers wait for
/// their start to be done; starts are quick, so they queue briefly.
/// Unchecked Sendable: the job queue is read and changed under `condition`'s lock.
final class SpawningThread: @unchecked Sendable {
    static let shared = SpawningThread()
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "groupsim.spawning"
        thread.start()
    }

    private func serve() {
        // A child starts with the signal mask of the thread that started it.
        // Every signal blocked, always, rather than whatever this thread
        // inherited from its first caller: the package's executables take
        // SIGINT and SIGTERM through dispatch signal sources, which on Linux
        // read a signalfd and see a signal only if no thread can take it
        // (a program that expects them unblocked must unblock them itself).
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_SETMASK, &all, nil)
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// Runs `body` on the spawning thread and returns what it returned (or throws what it threw).
    func run<T>(_ body: @escaping () throws -> T) throws -> T {
        let outcome = Outcome<T>()
        condition.withLock { jobs.append { outcome.finish(Result { try body() }) } }
        condition.signal()
        return try outcome.wait().get()
    }

    /// Unchecked Sendable: `result` is written once before `done` is signalled and read only after waiting on it.
    private final class Outcome<T>: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Result<T, Error>?
        func finish(_ result: Result<T, Error>) {
            self.result = result
            done.signal()
        }
        func wait() -> Result<T, Error> {
            done.wait()
            return result!
        }
    }
}

/// A child of `RunningProcess` starts with every signal blocked (see
/// `SpawningThread`), which suits the package's executables and no one
/// else: a user's program, run as an app, must be ended by SIGTERM and
/// interrupted by SIGINT as any program is. Its starter sets this variable;
/// the program, as it loads (SimulatedFoundation does it), unblocks every
/// signal, as `groupsim exec` does before it becomes the program.
package enum StartingSignalMask {
    package static let unblockVariable = "GROUPSIM_UNBLOCK_SIGNALS"

    /// Child side: with the variable set (to "1"), removes it and unblocks
    /// every signal of the calling thread (at load, the only one).
    package static func unblockIfAsked() {
        guard let raw = getenv(unblockVariable) else { return }
        let asked = String(cString: raw) == "1"
        unsetenv(unblockVariable)
        guard asked else { return }
        var nothingBlocked = sigset_t()
        sigemptyset(&nothingBlocked)
        pthread_sigmask(SIG_SETMASK, &nothingBlocked, nil)
    }
}
