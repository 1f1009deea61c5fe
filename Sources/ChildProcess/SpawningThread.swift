import Foundation
import Guarded

/// The one thread that starts every child of `RunningProcess`, for the life
/// of the process (see `OwnerLifetime`: the kernel ties a child's
/// `PR_SET_PDEATHSIG` to the thread that started it). Callers wait for
/// their start to be done; starts are quick, so they queue briefly.
/// Unchecked Sendable: the job queue is reached only through `jobs`' lock.
final class SpawningThread: @unchecked Sendable {
    static let shared = SpawningThread()
    private let jobs = LockedCondition<[() -> Void]>([])

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
            let job = jobs.wait(atMost: nil, for: { $0.isEmpty ? nil : $0.removeFirst() })
            job?()
        }
    }

    /// Runs `body` on the spawning thread and returns what it returned (or throws what it threw).
    func run<T>(_ body: @escaping () throws -> T) throws -> T {
        let outcome = LockedCondition<Result<T, any Error>?>(nil)
        jobs.withLock {
            $0.append {
                let result = Result { try body() }
                outcome.withLock { $0 = result }
            }
        }
        return try outcome.wait(atMost: nil, for: { $0 })!.get()
    }
}
