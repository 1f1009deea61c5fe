import Foundation
import PropertyList
import TestSupport
import Testing

@testable import GroupDefaults

/// What a synchronous observer was told, in order, and whether on the
/// thread that made the log (the test's, which makes the changes).
/// Unchecked Sendable: the log is read and changed under `lock`.
final class ChangeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [DefaultsChange] = []
    private var threads: [Bool] = []
    private let writer = pthread_self()

    func record(_ change: DefaultsChange) {
        let same = pthread_equal(pthread_self(), writer) != 0
        lock.withLock {
            changes.append(change)
            threads.append(same)
        }
    }

    var all: [DefaultsChange] { lock.withLock { changes } }
    var allOnTheWritingThread: Bool { lock.withLock { threads.allSatisfy { $0 } } }
    var summary: [String] { all.map { "\($0.key): \($0.old.map { "\($0)" } ?? "nil") -> \($0.new.map { "\($0)" } ?? "nil")" } }
}

@Suite struct SynchronousObserverTests {
    @Test func aChangeIsDeliveredOnTheWritingThreadBeforeSetReturns() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let log = ChangeLog()
        let token = defaults.observeSynchronously("theme") { log.record($0) }
        defaults.set("dark", forKey: "theme")
        // No waiting: the handler has already run.
        #expect(log.all.map(\.new) == [.string("dark")])
        #expect(log.all.first?.origin == .thisProcess)
        #expect(log.allOnTheWritingThread)
        token.cancel()
        defaults.set("light", forKey: "theme")
        #expect(log.all.count == 1)
    }

    @Test func anObserverAddedAfterASetIsNotToldOfIt() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let log = ChangeLog()
        // Hold the notification queue, so the set's queued delivery is still
        // waiting when the observer is added.
        let hold = DispatchSemaphore(value: 0)
        PersistentDomain.notificationQueue.async { hold.wait() }
        defaults.set("before", forKey: "k")
        let token = defaults.observeSynchronously("k") { log.record($0) }
        hold.signal()
        PersistentDomain.deliverPendingNotifications()
        #expect(log.all.isEmpty)
        defaults.set("after", forKey: "k")
        #expect(log.summary == ["k: \(PlistValue.string("before")) -> \(PlistValue.string("after"))"])
        PersistentDomain.deliverPendingNotifications()
        #expect(log.all.count == 1, "told once, not again by the queue")
        withExtendedLifetime(token) {}
    }

    @Test func onlyEffectiveValuesCount() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let log = ChangeLog()
        let token = defaults.observeSynchronously(nil) { log.record($0) }
        defaults.set("x", forKey: "same")
        defaults.set("x", forKey: "same")
        f.process.setLaunchArguments(["-hidden", "argument"])
        defaults.set("stored", forKey: "hidden")
        // Removing a stored value reveals the registered one: a change to it.
        f.process.register(["revealed": "registered"])
        defaults.set("stored", forKey: "revealed")
        defaults.removeObject(forKey: "revealed")
        #expect(log.all.map(\.key) == ["same", "hidden", "revealed", "revealed", "revealed"])
        #expect(log.all.filter { $0.key == "revealed" }.map(\.new) == [.string("registered"), .string("stored"), .string("registered")])
        #expect(log.all.filter { $0.key == "hidden" }.map(\.valueDomain) == ["NSArgumentDomain"])
        withExtendedLifetime(token) {}
    }

    @Test func changesThroughAnotherInstanceAndTransactionsAreSynchronousToo() throws {
        let f = Fixture()
        let observed = try f.suite()
        let writerInstance = try f.suite()
        let log = ChangeLog()
        let token = observed.observeSynchronously(nil) { log.record($0) }
        writerInstance.set("dark", forKey: "theme")
        #expect(log.all.map(\.key) == ["theme"])
        try writerInstance.increment("count")
        #expect(log.all.map(\.key) == ["theme", "count"])
        try writerInstance.setPersistentDomain(["only": "this"], forName: f.group)
        #expect(Set(log.all.dropFirst(2).map(\.key)) == ["theme", "count", "only"])
        #expect(log.allOnTheWritingThread)
        withExtendedLifetime(token) {}
    }

    @Test func aHandlerMayWriteAndSynchronize() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let log = ChangeLog()
        // A transaction's observers run after it has left the commit queue:
        // synchronizing from there would otherwise be refused as re-entry.
        let token = defaults.observeSynchronously(nil) { change in
            log.record(change)
            if change.key == "source" { defaults.set(change.new, forKey: "copy") }
            #expect(defaults.synchronize())
        }
        defaults.set("v", forKey: "source")
        try defaults.increment("counter")
        #expect(defaults.value(forKey: "copy") == "v")
        #expect(log.all.map(\.key) == ["source", "copy", "counter"])
        withExtendedLifetime(token) {}
    }

    @Test func queuedObserversStillHearThisProcessOnTheirQueue() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let received = DispatchSemaphore(value: 0)
        let token = defaults.observe("k") { _ in received.signal() }
        defaults.set("v", forKey: "k")
        #expect(received.wait(timeout: .now() + 10) == .success)
        withExtendedLifetime(token) {}
    }
}
