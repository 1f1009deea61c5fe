import Foundation

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
