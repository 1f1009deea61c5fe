#if canImport(Glibc)
    import Glibc
#endif

/// State under a pthread mutex with a condition variable: threads wait, with
/// a bound, until the state is what they need. Replaces `NSCondition`'s
/// hand-written `lock()`/`wait()`/`unlock()` (docs/architecture.md, "Threads and locks").
///
/// Every `withLock` wakes the waiters when it returns, still holding the lock,
/// so no change can leave a waiter asleep; a waiter looks again and waits on
/// if what it needs has not come. Waits count on the monotonic clock.
public final class LockedCondition<State> {
    private let mutex = PthreadMutex()
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Memory of its own, as `Locked`'s (why: there).
    private let state: UnsafeMutablePointer<State>

    /// Guards `state`, which from now on is reached only through `withLock` and `wait`.
    /// - Parameter state: The guarded state's first value.
    public init(_ state: State) {
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: state)
        condition = .allocate(capacity: 1)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with the state, holding the lock, then wakes every waiter.
    /// - Parameter body: Reads or changes the state; it must not take this lock again.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw (the waiters are woken and the lock released first).
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        mutex.lock()
        defer {
            pthread_cond_broadcast(condition)
            mutex.unlock()
        }
        return try body(&state.pointee)
    }

    /// Waits until `ready` gives a result, at most `seconds` (nil: no bound).
    /// `ready` runs under the lock: now, after each change, and once more at the end of the wait.
    /// - Parameters:
    ///   - seconds: The longest wait; nil waits as long as it takes.
    ///   - ready: What the waiter needs, taken from the state (which it may change), or nil while it has not come.
    ///   - timedOut: What to return (or throw) when the time is up, under the lock.
    /// - Returns: What `ready` or `timedOut` returned.
    /// - Throws: What `ready` or `timedOut` threw.
    public func wait<R>(
        atMost seconds: Double?, for ready: (inout State) throws -> R?, timedOut: (inout State) throws -> R
    ) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        let deadline = seconds.map { timespec(after: $0, on: CLOCK_MONOTONIC) }
        while true {
            if let result = try ready(&state.pointee) { return result }
            if var deadline {
                if pthread_cond_timedwait(condition, mutex.pointer, &deadline) == ETIMEDOUT {
                    return try ready(&state.pointee) ?? timedOut(&state.pointee)
                }
            } else {
                pthread_cond_wait(condition, mutex.pointer)
            }
        }
    }

    /// Waits until `ready` gives a result, at most `seconds` (nil: no bound); nil when the time is up first.
    /// - Parameters:
    ///   - seconds: The longest wait; nil waits as long as it takes.
    ///   - ready: What the waiter needs, taken from the state (which it may change), or nil while it has not come.
    /// - Returns: What `ready` returned, or nil when the time was up first.
    /// - Throws: What `ready` threw.
    public func wait<R>(atMost seconds: Double?, for ready: (inout State) throws -> R?) rethrows -> R? {
        try wait(atMost: seconds, for: { try ready(&$0).map(Optional.some) }, timedOut: { _ in nil })
    }

    /// Waits until `isDone` holds, at most `seconds`; whether it held.
    /// - Parameters:
    ///   - seconds: The longest wait; nil waits as long as it takes.
    ///   - isDone: Whether what the waiter needs has come, looked at under the lock.
    /// - Returns: Whether `isDone` held before the time was up.
    public func wait(atMost seconds: Double?, until isDone: (State) -> Bool) -> Bool {
        wait(atMost: seconds, for: { isDone($0) ? true : nil }, timedOut: { _ in false })
    }
}

extension LockedCondition: @unchecked Sendable where State: Sendable {}

extension LockedCondition where State == Void {
    /// A lock and condition for state kept beside it (fields of the owner that its comments say are under this lock).
    public convenience init() { self.init(()) }

    /// Runs `body` holding the lock, then wakes every waiter.
    /// - Parameter body: Reads or changes the state this lock guards; it must not take this lock again.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw (the waiters are woken and the lock released first).
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        try withLock { (_: inout Void) in try body() }
    }

    /// Waits until `isDone` holds, at most `seconds`; whether it held.
    /// - Parameters:
    ///   - seconds: The longest wait; nil waits as long as it takes.
    ///   - isDone: Whether what the waiter needs has come, looked at under the lock.
    /// - Returns: Whether `isDone` held before the time was up.
    public func wait(atMost seconds: Double?, until isDone: () -> Bool) -> Bool {
        wait(atMost: seconds, until: { (_: Void) in isDone() })
    }
}
