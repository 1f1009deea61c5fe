#if canImport(Glibc)
    import Glibc
#endif

/// State that is reached only inside `withLock`, under a pthread mutex.
///
/// The package's one way to guard state shared by threads (docs/architecture.md,
/// "Threads and locks"). A pthread mutex, because Thread Sanitizer intercepts it
/// and so sees what it orders; `Synchronization.Mutex` is a futex of its own on
/// Linux, which Thread Sanitizer does not know, so every access it guards is
/// reported as a race. The mutex checks for errors: a thread that takes a lock
/// it already holds stops with a message instead of hanging.
///
/// The state lives inside: what `withLock` returns is a copy taken under the
/// lock. `Locked<Void>` (made with `Locked()`) guards state kept elsewhere, for
/// a type whose fields are many and read by helpers that run with the lock held.
public final class Locked<State> {
    private let mutex = PthreadMutex()
    /// Memory of its own, not a stored property: Swift's exclusivity checks of a class's property are what Thread
    /// Sanitizer would see (and, for `Void`, at the object's own address, beside its reference count).
    private let state: UnsafeMutablePointer<State>

    /// Guards `state`, which from now on is reached only through `withLock`.
    /// - Parameter state: The guarded state's first value.
    public init(_ state: State) {
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: state)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with the state, holding the lock, and returns what it returned.
    /// - Parameter body: Reads or changes the state; it must not take this lock again.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw (the lock is released first).
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&state.pointee)
    }

    /// Like `withLock(_:)`, but waits for the lock at most `seconds`; if it is still held then, `timedOut` runs
    /// instead of `body`, without the lock.
    /// - Parameters:
    ///   - seconds: The longest wait for the lock.
    ///   - body: Reads or changes the state.
    ///   - timedOut: What to return (or throw) when the lock was not had in time.
    /// - Returns: What `body` or `timedOut` returned.
    /// - Throws: What `body` or `timedOut` threw.
    public func withLock<R>(waitingAtMost seconds: Double, _ body: (inout State) throws -> R, timedOut: () throws -> R) rethrows -> R {
        guard mutex.lock(waitingAtMost: seconds) else { return try timedOut() }
        defer { mutex.unlock() }
        return try body(&state.pointee)
    }
}

extension Locked where State == Void {
    /// A lock for state kept beside it (fields of the owner that its comments say are under this lock).
    public convenience init() { self.init(()) }

    /// Runs `body` holding the lock.
    /// - Parameter body: Reads or changes the state this lock guards; it must not take this lock again.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw (the lock is released first).
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        try withLock { (_: inout Void) in try body() }
    }
}

/// The state itself is never handed out but through `withLock`; values taken out of it cross threads as the
/// caller's own Sendable rules allow.
extension Locked: @unchecked Sendable where State: Sendable {}
