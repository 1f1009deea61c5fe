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
        let signaller = Task {
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
        let wakeup = Wakeup()
        // A timer armed for a second from now, its wait ended by a signal. A
        // machine stalled past that second lets the timer end the wait
        // instead: the signal is then left for the next wait, and the try is made again.
        var endedBySignal = false
        for _ in 0..<5 where !endedBySignal {
            let signaller = Task {
                while !wakeup.isWaiting && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(1)) }
                wakeup.signal()
            }
            let start = ContinuousClock.now
            await wakeup.wait(timeout: .seconds(1))
            endedBySignal = ContinuousClock.now - start < .seconds(1)
            if !endedBySignal { signaller.cancel() }
            await signaller.value
            // A signal that came after the timeout is left for the next wait: taken here.
            if !endedBySignal { await wakeup.wait(timeout: .seconds(1)) }
        }
        #expect(endedBySignal, "five waits in a row outlasted their timeout: the machine is too busy to tell")
        // That timer fires a second after the first wait began; this wait must last its full 2 s.
        var start = ContinuousClock.now
        await wakeup.wait(timeout: .seconds(2))
        #expect(ContinuousClock.now - start >= .seconds(2))

        // Now one armed for 30 s, ended by a signal; a 100 ms wait after it ends on its own time.
        let signaller = Task {
            while !wakeup.isWaiting { try? await Task.sleep(for: .milliseconds(1)) }
            wakeup.signal()
        }
        await wakeup.wait(timeout: .seconds(30))
        await signaller.value
        start = ContinuousClock.now
        await wakeup.wait(timeout: .milliseconds(100))
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(100))
        // Not the 30 s timer's: the lower bound says it was not early, this that it was not that late.
        #expect(waited < .seconds(30))
    }
}
