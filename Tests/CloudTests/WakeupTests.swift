import Foundation
import Testing

@testable import CloudService

/// The agent's wake-up: a signal ends the wait (or the next one), a timeout
/// ends it no earlier than asked, and a timer armed for an earlier wait never
/// ends a later one early. Only lower bounds are checked: how soon after its
/// deadline a wait ends is the benchmark's business.
@Suite(.timeLimit(.minutes(1))) struct WakeupTests {
    @Test func aSignalBeforeTheWaitEndsItAtOnce() async {
        let wakeup = Wakeup()
        wakeup.signal()
        let start = ContinuousClock.now
        await wakeup.wait(timeout: .seconds(30))
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func aSignalDuringTheWaitEndsIt() async {
        let wakeup = Wakeup()
        let signaller = Task(priority: .high) {  // not queued behind the tests waiting for the .medium pool (CONTRIBUTING.md)
            try? await Task.sleep(for: .milliseconds(20))
            wakeup.signal()
        }
        let start = ContinuousClock.now
        await wakeup.wait(timeout: .seconds(30))
        #expect(ContinuousClock.now - start < .seconds(30))
        await signaller.value
    }

    @Test func aTimeoutEndsTheWaitNoEarlier() async {
        let wakeup = Wakeup()
        let start = ContinuousClock.now
        await wakeup.wait(timeout: .milliseconds(100))
        #expect(ContinuousClock.now - start >= .milliseconds(100))
    }

    /// A wait signalled early leaves its timer armed; a later, longer wait
    /// must outlast that timer, and a later, shorter one must not wait for it.
    @Test func aTimerLeftByAnEarlierWaitNeitherEndsNorDelaysALaterOne() async {
        // A machine stalled past the first wait's second lets its timeout end
        // it instead of the signal: then the try is made again, with a new Wakeup.
        for _ in 0..<5 {
            let wakeup = Wakeup()
            // A timer armed for a second from now, its wait ended by a signal.
            let signaller = Signaller(wakeup)
            await wakeup.wait(timeout: .seconds(1))
            guard await signaller.endedAWait() else { continue }
            // That timer fires a second after the first wait began; this wait must last its full 2 s.
            var start = ContinuousClock.now
            await wakeup.wait(timeout: .seconds(2))
            #expect(ContinuousClock.now - start >= .seconds(2))

            // Now one armed for 30 s, ended by a signal; a 100 ms wait after it ends on its own time.
            let second = Signaller(wakeup)
            await wakeup.wait(timeout: .seconds(30))
            #expect(await second.endedAWait())
            start = ContinuousClock.now
            await wakeup.wait(timeout: .milliseconds(100))
            let waited = ContinuousClock.now - start
            #expect(waited >= .milliseconds(100))
            // Not the 30 s timer's: the lower bound says it was not early, this that it was not that late.
            #expect(waited < .seconds(30))
            return
        }
        Issue.record("five first waits in a row outlasted their timeout: the machine is too busy to tell")
    }
}

/// Signals a `Wakeup` once a wait is under way, from a dispatch thread: not
/// from the cooperative pool, which the suite's other tests may hold for
/// seconds. Gives up after 5 s with no wait.
final class Signaller: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Bool?

    init(_ wakeup: Wakeup) {
        DispatchQueue.global().async { [self] in
            let giveUp = ContinuousClock.now + .seconds(5)
            while !wakeup.isWaiting && ContinuousClock.now < giveUp { usleep(500) }
            let ended = wakeup.isWaiting && wakeup.signal()
            lock.withLock { outcome = ended }
        }
    }

    /// Whether the signal ended a wait under way (and not the timeout first), once sent.
    func endedAWait() async -> Bool {
        while true {
            if let outcome = lock.withLock({ outcome }) { return outcome }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
