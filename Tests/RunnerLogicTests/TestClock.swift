import Guarded
import Scenarios

/// A clock that moves only when the runner waits: a wait whose answer is not
/// there already (a scripted process answers as it is written to, so nothing
/// more can come) lets its whole bound pass at once, and a pause passes at
/// once. A timeout is checked without being waited for.
final class TestClock: RunnerClock {
    private let nanoseconds = Locked<UInt64>(0)

    /// The seconds that have passed on this clock.
    var elapsed: Double { Double(nanoseconds.withLock { $0 }) / 1e9 }

    func now() -> UInt64 { nanoseconds.withLock { $0 } }

    func wait<State, R>(
        on condition: LockedCondition<State>, atMost seconds: Double, for ready: (inout State) throws -> R?, timedOut: (inout State) throws -> R
    ) rethrows -> R {
        try condition.withLock { state in
            if let result = try ready(&state) { return result }
            pause(seconds)
            return try timedOut(&state)
        }
    }

    func pause(_ seconds: Double) { nanoseconds.withLock { $0 += UInt64(seconds * 1e9) } }
}
