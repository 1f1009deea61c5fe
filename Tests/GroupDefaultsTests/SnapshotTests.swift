import Foundation
import PropertyList
import TestSupport
import Testing

@testable import GroupDefaults

/// Reads are answered from a snapshot of the whole search list, cached
/// between changes: every kind of change must reach the next read, in the
/// instance that made it and in every other instance of the process.
@Suite struct SnapshotTests {
    /// Lives as long as the test: a `Fixture()` used inline would remove its root at once.
    let fixture = Fixture()

    /// The key's look-up, after checking that the whole view
    /// (`dictionaryRepresentation()`, also cached between changes) agrees with it.
    static func lookup(_ key: String, in defaults: GroupDefaults) -> (value: PlistValue, domain: String)? {
        let found = defaults.lookup(key)
        let whole = defaults.dictionaryRepresentation()
        #expect(whole[key] == found?.value, "the whole view says \(String(describing: whole[key]))")
        return found
    }

    @Test func everyKindOfChangeReachesTheNextRead() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let sameDomain = try f.standard()
        let suite = try f.suite()
        // Each read below comes after a read that cached the snapshot; so
        // does each whole view (`lookup(_:in:)`).
        func lookup(_ key: String) -> (value: PlistValue, domain: String)? { Self.lookup(key, in: defaults) }
        #expect(defaults.value(forKey: "k") == nil)

        f.process.register(["k": "registered"])
        #expect(lookup("k")! == (.string("registered"), "NSRegistrationDomain"))
        try defaults.setPersistentDomain(["k": "global"], forName: "NSGlobalDomain")
        #expect(lookup("k")! == (.string("global"), "NSGlobalDomain"))

        suite.set("suite", forKey: "k")
        #expect(lookup("k")?.domain == "NSGlobalDomain", "not in the search list yet")
        try defaults.addSuite(named: f.group)
        #expect(lookup("k")! == (.string("suite"), f.group))

        sameDomain.set("own", forKey: "k")
        #expect(lookup("k")! == (.string("own"), "com.example.app"))
        try sameDomain.increment("counter")
        #expect(defaults.integer(forKey: "counter") == 1)

        f.process.setLaunchArguments(["-k", "argument"])
        #expect(lookup("k")! == (.string("argument"), "NSArgumentDomain"))
        f.process.setLaunchArguments([])
        #expect(lookup("k")?.domain == "com.example.app")

        sameDomain.removeObject(forKey: "k")
        #expect(lookup("k")! == (.string("suite"), f.group))
        defaults.removeSuite(named: f.group)
        #expect(lookup("k")! == (.string("global"), "NSGlobalDomain"))
        try defaults.removePersistentDomain(forName: "NSGlobalDomain")
        #expect(lookup("k")! == (.string("registered"), "NSRegistrationDomain"))
        #expect(defaults.dictionaryRepresentation()["counter"] == .integer(1))
    }

    @Test func anotherProcessesWriteReachesTheNextRead() throws {
        let f = Fixture()
        let defaults = try f.suite()
        #expect(defaults.value(forKey: "k") == nil)
        // Another process's write, found by a reload of the file.
        try DomainFiles(root: SimulationRoot(path: f.root.path), device: "iPhone").update(f.group) { $0["k"] = "disk" }
        defaults.own.reloadNow()
        #expect(defaults.value(forKey: "k") == "disk")
        #expect(defaults.dictionaryRepresentation()["k"] == "disk")
    }

    /// The instance's own set carries its snapshot along: a read right after
    /// it is a look-up, not a rebuild, and still sees what the search list says.
    @Test func aReadAfterTheInstancesOwnSetNeedsNoRebuild() throws {
        let f = Fixture()
        let defaults = try f.standard()
        f.process.register(["k": "registered"])
        f.process.setLaunchArguments(["-hidden", "argument"])
        #expect(defaults.value(forKey: "k") == "registered")
        // The whole view too is carried through each set, never left as it was (`lookup(_:in:)`).
        func lookup(_ key: String) -> (value: PlistValue, domain: String)? { Self.lookup(key, in: defaults) }
        #expect(lookup("k")! == (.string("registered"), "NSRegistrationDomain"))
        let builds = defaults.snapshotBuildCount

        defaults.set("own", forKey: "k")
        #expect(lookup("k")! == (.string("own"), "com.example.app"))
        defaults.removeObject(forKey: "k")
        #expect(lookup("k")! == (.string("registered"), "NSRegistrationDomain"))
        defaults.set("mine", forKey: "hidden")
        #expect(lookup("hidden")! == (.string("argument"), "NSArgumentDomain"))
        defaults.set(url: URL(fileURLWithPath: "/tmp/x"), forKey: "fresh")
        #expect(defaults.dictionaryRepresentation()["fresh"] == "/tmp/x")
        defaults.removeObject(forKey: "never-set")
        #expect(defaults.value(forKey: "never-set") == nil)
        #expect(defaults.snapshotBuildCount == builds)

        // Another instance's set of the same domain is seen, through a rebuild.
        try f.standard().set("other", forKey: "k")
        #expect(defaults.value(forKey: "k") == "other")
        #expect(defaults.snapshotBuildCount == builds + 1)
    }

    /// Sets carried into the snapshot while other threads read it: a reader
    /// never sees a value go back, and the last set is what everyone reads.
    @Test func readersOnOtherThreadsSeeSetsInOrder() throws {
        let defaults = try fixture.standard()
        let wentBack = NSLock()
        nonisolated(unsafe) var regressions: [String] = []
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            var last: Int64 = -1
            for round in 0..<3000 {
                if worker == 0 {
                    defaults.set(.integer(Int64(round)), forKey: "n")
                    continue
                }
                guard case .integer(let seen)? = worker == 1 ? defaults.value(forKey: "n") : defaults.dictionaryRepresentation()["n"] else {
                    continue
                }
                if seen < last { wentBack.withLock { regressions.append("worker \(worker): \(last) then \(seen)") } }
                last = seen
            }
        }
        #expect(regressions.isEmpty, "\(regressions.prefix(5))")
        #expect(defaults.integer(forKey: "n") == 2999)
    }

    /// A change nobody observes is not dispatched anywhere: an instance
    /// listens to its domains only while it has an observer.
    @Test func anInstanceListensOnlyWhileObserved() throws {
        let f = Fixture()
        let defaults = try f.standard()
        try defaults.addSuite(named: f.group)
        let domains = [defaults.own, defaults.global] + defaults.addedSuites
        #expect(domains.map(\.listenerCount) == [0, 0, 0])

        let first = defaults.observe("k") { _ in }
        let second = defaults.observeSynchronously(nil) { _ in }
        #expect(domains.map(\.listenerCount) == [2, 2, 2])
        first.cancel()
        #expect(domains.map(\.listenerCount) == [2, 2, 2])
        second.cancel()
        #expect(domains.map(\.listenerCount) == [0, 0, 0])

        // Observed again, with a suite added while observed.
        let log = ChangeLog()
        let third = defaults.observeSynchronously("k") { log.record($0) }
        try defaults.addSuite(named: "com.example.other")
        #expect(defaults.addedSuites.map(\.listenerCount) == [2, 2])
        let other = try GroupDefaults(suiteName: "com.example.other", context: f.context(), processDomains: f.process)
        other.set("other", forKey: "k")
        #expect(log.all.map(\.new) == [.string("other")])
        third.cancel()
    }
}
