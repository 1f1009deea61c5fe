import Foundation
import Guarded
import SharedFiles

/// The time the runner waits on: a wait's bound, a paced burst's pauses, the
/// times the log stamps. Real (`SystemRunnerClock`) in a run; a test's clock
/// can let a wait's whole bound pass at once, so a timeout is checked without waiting for it.
package protocol RunnerClock: Sendable {
    /// Now, in nanoseconds (only differences mean anything).
    /// - Returns: The clock's reading.
    func now() -> UInt64

    /// Waits until `ready` gives a result, at most `seconds` on this clock.
    /// - Parameters:
    ///   - condition: The state waited on; its changes wake the wait.
    ///   - seconds: The wait's bound.
    ///   - ready: What the waiter needs, under the condition's lock, or nil while it has not come.
    ///   - timedOut: What to return (or throw) once `seconds` have passed, under the lock.
    /// - Returns: What `ready` or `timedOut` returned.
    /// - Throws: What `ready` or `timedOut` threw.
    func wait<State, R>(
        on condition: LockedCondition<State>, atMost seconds: Double, for ready: (inout State) throws -> R?, timedOut: (inout State) throws -> R
    ) rethrows -> R

    /// Lets `seconds` pass: the pause between two writes of a paced burst.
    /// - Parameter seconds: How long.
    func pause(_ seconds: Double)
}

/// The real clock: the monotonic clock, the condition's own timed wait, a sleep.
package struct SystemRunnerClock: RunnerClock {
    package init() {}

    package func now() -> UInt64 { MonotonicClock.now() }

    package func wait<State, R>(
        on condition: LockedCondition<State>, atMost seconds: Double, for ready: (inout State) throws -> R?, timedOut: (inout State) throws -> R
    ) rethrows -> R {
        try condition.wait(atMost: seconds, for: ready, timedOut: timedOut)
    }

    package func pause(_ seconds: Double) { usleep(useconds_t(seconds * 1_000_000)) }
}
