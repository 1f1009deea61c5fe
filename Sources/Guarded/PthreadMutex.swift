#if canImport(Glibc)
    import Glibc
#endif

/// The pthread mutex under `Locked` and `LockedCondition`: the one place in
/// Sources that locks and unlocks by hand (scripts/architecture-check.py
/// refuses it anywhere else). Error-checking, so a thread taking it twice
/// stops with a message rather than hanging.
final class PthreadMutex {
    let pointer: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        pointer = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(pointer, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(pointer)
        pointer.deallocate()
    }

    func lock() {
        let code = pthread_mutex_lock(pointer)
        precondition(code == 0, Self.message(code))
    }

    /// Takes the mutex, waiting at most `seconds`; false if it was still held then.
    func lock(waitingAtMost seconds: Double) -> Bool {
        // pthread_mutex_timedlock counts on the real-time clock; a clock step during the wait only shortens or lengthens it.
        var deadline = timespec(after: seconds, on: CLOCK_REALTIME)
        let code = pthread_mutex_timedlock(pointer, &deadline)
        if code == ETIMEDOUT { return false }
        precondition(code == 0, Self.message(code))
        return true
    }

    func unlock() {
        let code = pthread_mutex_unlock(pointer)
        precondition(code == 0, Self.message(code))
    }

    private static func message(_ code: Int32) -> String {
        code == EDEADLK
            ? "a thread took a lock it already holds (a withLock inside a withLock of the same lock)"
            : "pthread mutex call failed with error \(code)"
    }
}

extension timespec {
    /// `seconds` from now on `clock`, as the pthread waits take a deadline (negative is now; a huge bound is a century).
    init(after seconds: Double, on clock: clockid_t) {
        var now = timespec()
        clock_gettime(clock, &now)
        let bounded = min(max(seconds, 0), 100 * 365 * 86_400)
        let whole = Int(bounded)
        self.init(tv_sec: now.tv_sec + whole, tv_nsec: now.tv_nsec + Int((bounded - Double(whole)) * 1e9))
        if tv_nsec >= 1_000_000_000 {
            tv_nsec -= 1_000_000_000
            tv_sec += 1
        }
    }
}
