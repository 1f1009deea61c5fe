import Foundation
import Guarded
import Testing

/// The lock idiom every library uses: state reached only inside `withLock`, waits with a bound.
struct LockedTests {
    @Test func changesMadeOnManyThreadsAreAllKept() {
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 8_000)
    }

    @Test func aLockStillHeldElsewhereRunsTheTimedOutBranch() {
        let lock = Locked()
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            lock.withLock {
                holding.signal()
                release.wait()
            }
        }
        holder.start()
        holding.wait()
        let outcome = lock.withLock(waitingAtMost: 0.05, { _ in "locked" }, timedOut: { "timed out" })
        release.signal()
        #expect(outcome == "timed out")
        // Released: the next caller gets it.
        #expect(lock.withLock(waitingAtMost: 600, { _ in "locked" }, timedOut: { "timed out" }) == "locked")
    }

    @Test func aWaitEndsWithTheChangeThatSatisfiesIt() {
        let queue = LockedCondition<[Int]>([])
        let producer = Thread {
            for value in 1...5 { queue.withLock { $0.append(value) } }
        }
        producer.start()
        // Takes the values in order as they come; the bound is only for a hang.
        var taken: [Int] = []
        while taken.count < 5 {
            guard let value = queue.wait(atMost: 600, for: { $0.isEmpty ? nil : $0.removeFirst() }) else { break }
            taken.append(value)
        }
        #expect(taken == [1, 2, 3, 4, 5])
    }

    @Test func aWaitWhoseStateNeverComesTimesOut() throws {
        let flag = LockedCondition(false)
        #expect(flag.wait(atMost: 0.05) { $0 } == false)
        #expect(flag.wait(atMost: 0.05, for: { $0 ? 1 : nil }) == nil)
        let message = flag.wait(atMost: 0.05, for: { $0 ? "set" : nil }, timedOut: { "still \($0)" })
        #expect(message == "still false")
        // A negative bound is a look without a wait.
        flag.withLock { $0 = true }
        #expect(flag.wait(atMost: -1) { $0 })
    }

    @Test func aHugeBoundIsAWaitThatEndsWithTheChange() {
        let finished = LockedCondition(false)
        let worker = Thread { finished.withLock { $0 = true } }
        worker.start()
        #expect(finished.wait(atMost: .greatestFiniteMagnitude) { $0 })
    }
}
