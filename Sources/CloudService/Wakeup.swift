import Foundation

/// A level-triggered signal for one waiting task: `signal` from any thread
/// (a file listener), `wait` returns at the first signal since the last wait,
/// or at the timeout.
/// Unchecked Sendable: every stored property is read and changed under `lock`.
final class Wakeup: @unchecked Sendable {
    private let lock = NSLock()
    private var signalled = false
    private var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
    /// The current wait's timeout, cancelled when a signal ends the wait first.
    private var timer: Task<Void, Never>?
    private var nextWaiter = 0

    func signal() {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard let waiter else {
                signalled = true
                return nil
            }
            self.waiter = nil
            timer?.cancel()
            timer = nil
            return waiter.continuation
        }
        waiting?.resume()
    }

    func wait(timeout: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = lock.withLock { () -> Int? in
                if signalled {
                    signalled = false
                    return nil
                }
                nextWaiter += 1
                waiter = (nextWaiter, continuation)
                return nextWaiter
            }
            guard let id else { return continuation.resume() }
            let timer = Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self.expire(id)
            }
            lock.withLock {
                if waiter?.id == id { self.timer = timer } else { timer.cancel() }
            }
        }
    }

    private func expire(_ id: Int) {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard let waiter, waiter.id == id else { return nil }
            self.waiter = nil
            timer = nil
            return waiter.continuation
        }
        waiting?.resume()
    }
}
