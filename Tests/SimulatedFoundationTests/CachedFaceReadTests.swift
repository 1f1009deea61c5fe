import AllocationCounter
import Foundation
import GroupDefaults
import SimulatedFoundation
import TestSupport
import Testing

/// The face's getters answer from the cached search list: another real
/// process's write must reach them, and a cached read allocates nothing.
@Suite struct CachedFaceReadTests {
    /// The reading instance observes nothing (so nothing of it listens): a
    /// second instance's observer only says when the write has arrived.
    @Test func anotherProcessesWriteReachesAnUnobservedInstancesCachedRead() throws {
        let f = FaceFixture()
        let process = f.process()
        let reader = try #require(GroupSim.defaults(suiteName: f.group, of: process))
        let watcher = try #require(GroupSim.defaults(suiteName: f.group, of: process))
        reader.set("light", forKey: "theme")
        reader.synchronize()
        for _ in 0..<3 { #expect(reader.string(forKey: "theme") == "light") }
        let arrived = Received()
        let observation = GroupSim.observe(watcher, "theme") { arrived.add($0) }

        let write = try groupsim(["defaults", "write", f.group, "theme", "dark"], root: f.root)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(arrived.wait(for: 1))
        #expect(reader.string(forKey: "theme") == "dark")

        let delete = try groupsim(["defaults", "delete", f.group, "theme"], root: f.root)
        #expect(delete.status == 0, "\(delete.stderr)")
        #expect(arrived.wait(for: 2))
        #expect(reader.string(forKey: "theme") == nil)
        withExtendedLifetime(observation) {}
    }

    @Test(.enabled(if: allocation_counter_is_available() != 0, "a sanitizer's runtime owns malloc in this build"))
    func aCachedReadThroughTheFaceAllocatesNothing() throws {
        let f = FaceFixture()
        let process = f.process(arguments: ["-flag", "YES"])
        let defaults = try #require(GroupSim.defaults(suiteName: f.group, of: process))
        defaults.register(defaults: ["registered": 42])
        for index in 0..<100 { defaults.set("value \(index), longer than a small string", forKey: "key-\(index)") }
        // Each kind of read once, so anything made once per process is made.
        #expect(defaults.string(forKey: "key-50") == "value 50, longer than a small string")
        #expect(defaults.integer(forKey: "registered") == 42 && defaults.bool(forKey: "flag") && defaults.object(forKey: "absent") == nil)

        var sink = 0
        allocation_counter_start()
        for _ in 0..<1000 {
            sink &+= defaults.string(forKey: "key-50")?.utf8.count ?? 0
            sink &+= defaults.integer(forKey: "registered")
            sink &+= defaults.bool(forKey: "flag") ? 1 : 0
            sink &+= defaults.object(forKey: "absent") == nil ? 1 : 0
        }
        let allocations = allocation_counter_stop()
        #expect(allocations == 0, "4,000 cached reads allocated \(allocations) times")
        #expect(sink > 0)
    }

    /// `dictionaryRepresentation()` called again before anything changed
    /// hands back the view the last call made (nothing allocated); a set, a
    /// registration and another real process's write each make a new one.
    @Test(.enabled(if: allocation_counter_is_available() != 0, "a sanitizer's runtime owns malloc in this build"))
    func aRepeatedDictionaryRepresentationIsReusedUntilSomethingChanges() throws {
        let f = FaceFixture()
        let process = f.process()
        let defaults = try #require(GroupSim.defaults(suiteName: f.group, of: process))
        for index in 0..<100 { defaults.set("value \(index), longer than a small string", forKey: "key-\(index)") }
        defaults.synchronize()
        let first = defaults.dictionaryRepresentation()
        #expect(first["key-50"] as? String == "value 50, longer than a small string")
        // The suite's 100 keys, and the languages domain's.
        #expect(first.count > 100)

        var sink = 0
        allocation_counter_start()
        for _ in 0..<100 { sink &+= defaults.dictionaryRepresentation().count }
        let allocations = allocation_counter_stop()
        #expect(allocations == 0, "100 repeated calls allocated \(allocations) times")
        #expect(sink == 100 * first.count)

        defaults.set(7, forKey: "key-50")
        #expect(defaults.dictionaryRepresentation()["key-50"] as? Int == 7)
        defaults.register(defaults: ["registered": true])
        #expect(defaults.dictionaryRepresentation()["registered"] as? Bool == true)

        let arrived = Received()
        let observation = GroupSim.observe(defaults, "key-51") { arrived.add($0) }
        let write = try groupsim(["defaults", "write", f.group, "key-51", "from another process"], root: f.root)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(arrived.wait(for: 1))
        #expect(defaults.dictionaryRepresentation()["key-51"] as? String == "from another process")
        withExtendedLifetime(observation) {}
    }
}
