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
        // A timer armed for 150 ms from now, its wait ended by a signal.
        let signalled = Task {
            try? await Task.sleep(for: .milliseconds(10))
            wakeup.signal()
        }
        await wakeup.wait(timeout: .milliseconds(150))
        await signalled.value
        // That timer fires about 150 ms from now; this wait must last its full 600 ms.
        var start = ContinuousClock.now
        await wakeup.wait(timeout: .milliseconds(600))
        #expect(ContinuousClock.now - start >= .milliseconds(600))

        // Now one armed for 10 s, ended by a signal; a 100 ms wait after it ends on its own time.
        let longSignalled = Task {
            try? await Task.sleep(for: .milliseconds(10))
            wakeup.signal()
        }
        await wakeup.wait(timeout: .seconds(10))
        await longSignalled.value
        start = ContinuousClock.now
        await wakeup.wait(timeout: .milliseconds(100))
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(100))
        // Not the 10 s timer's: the suite's time limit would end a wait that long, and the lower bound says it was not early.
        #expect(waited < .seconds(10))
    }
}
