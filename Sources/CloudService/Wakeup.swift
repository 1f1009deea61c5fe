import Foundation
import Guarded

/// A level-triggered signal for one waiting task: `signal` from any thread
/// (a file listener), `wait` returns at the first signal since the last wait,
/// or at the timeout.
///
/// Timeouts cost no wake-up per wait. A timer is armed only when no armed
/// one is due by the new deadline; one that fires before the waiter's
/// deadline (armed for an earlier wait that a signal ended) arms the next.
/// A loop that waits a second at a time and is signalled hundreds of times
/// a second so arms about one timer a second, where a sleeping task per
/// wait (resumed on a pool thread when cancelled) or a dispatch timer per
/// wait (each waking dispatch's timer thread) woke a thread on every signal.
/// Unchecked Sendable: every stored property is read and changed under `lock`.
final class Wakeup: @unchecked Sendable {
    private let lock = Locked()
    private var signalled = false
    private var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>, deadline: DispatchTime)?
    /// The earliest deadline a timer is armed for, while one is.
    private var armedFor: DispatchTime?
    private var nextWaiter = 0

    /// Whether a wait is under way (for tests: to signal a wait, not the next one).
    var isWaiting: Bool { lock.withLock { waiter != nil } }

    /// Ends the wait under way, or else the next one; whether it ended one under way.
    @discardableResult
    func signal() -> Bool {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard let waiter else {
                signalled = true
                return nil
            }
            self.waiter = nil
            return waiter.continuation
        }
        waiting?.resume()
        return waiting != nil
    }

    func wait(timeout: Duration) async {
        // At most a day: no wait here is longer, and the nanoseconds stay far from overflow.
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = min(max(0, seconds), 86_400) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        let deadline = DispatchTime.now() + .nanoseconds(Int(nanoseconds))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (resumeNow, arm) = lock.withLock { () -> (Bool, Bool) in
                if signalled {
                    signalled = false
                    return (true, false)
                }
                nextWaiter += 1
                waiter = (nextWaiter, continuation, deadline)
                return (false, armIfNeeded(for: deadline))
            }
            if resumeNow { return continuation.resume() }
            if arm { schedule(deadline) }
        }
    }

    /// Under `lock`: whether a timer must be armed for `deadline` (none armed is due by then).
    private func armIfNeeded(for deadline: DispatchTime) -> Bool {
        if let armedFor, armedFor <= deadline { return false }
        armedFor = deadline
        return true
    }

    private func schedule(_ deadline: DispatchTime) {
        DispatchQueue.global().asyncAfter(deadline: deadline) { [weak self] in self?.fire(armedFor: deadline) }
    }

    /// A timer's time: the waiter's wait ends if its deadline passed; if not
    /// (the timer was armed for an earlier wait), a timer is armed for it.
    private func fire(armedFor deadline: DispatchTime) {
        let (expired, rearm) = lock.withLock { () -> (CheckedContinuation<Void, Never>?, DispatchTime?) in
            if armedFor == deadline { armedFor = nil }
            guard let waiter else { return (nil, nil) }
            if waiter.deadline <= .now() {
                self.waiter = nil
                return (waiter.continuation, nil)
            }
            return (nil, armIfNeeded(for: waiter.deadline) ? waiter.deadline : nil)
        }
        expired?.resume()
        if let rearm { schedule(rearm) }
    }
}
