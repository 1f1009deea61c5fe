import AllocationCounter
import Foundation
import PropertyList
import TestSupport
import Testing

@testable import GroupDefaults

/// The typed getters and `value(forKey:)` answer from the cached snapshot
/// while nothing moved: every change must still reach the very next read,
/// and a cached read allocates nothing.
@Suite struct CachedReadTests {
    /// Each `#expect` reads through `value(forKey:)`, the path the getters
    /// take, right after a read that cached the snapshot.
    @Test func everyKindOfChangeReachesTheNextCachedRead() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let sameDomain = try f.standard()
        let suite = try f.suite()
        let otherProcessDomains = ProcessDomains()
        #expect(defaults.value(forKey: "k") == nil)

        f.process.register(["k": "registered"])
        #expect(defaults.value(forKey: "k") == "registered")
        otherProcessDomains.register(["k": "another process's registration"])
        #expect(defaults.value(forKey: "k") == "registered")
        try sameDomain.setPersistentDomain(["k": "global"], forName: "NSGlobalDomain")
        #expect(defaults.value(forKey: "k") == "global")

        suite.set("suite", forKey: "k")
        #expect(defaults.value(forKey: "k") == "global", "not in the search list yet")
        try defaults.addSuite(named: f.group)
        #expect(defaults.value(forKey: "k") == "suite")
        suite.set("suite, again", forKey: "k")
        #expect(defaults.value(forKey: "k") == "suite, again", "a suite's own instance set it")

        sameDomain.set("own", forKey: "k")
        #expect(defaults.string(forKey: "k") == "own", "another instance of the own domain set it")
        defaults.set("own, again", forKey: "k")
        #expect(defaults.string(forKey: "k") == "own, again")
        try sameDomain.increment("counter")
        #expect(defaults.integer(forKey: "counter") == 1)
        try sameDomain.transaction { $0["counter"] = 5 }
        #expect(defaults.integer(forKey: "counter") == 5)

        f.process.setLaunchArguments(["-k", "argument"])
        #expect(defaults.value(forKey: "k") == "argument")
        // A named volatile domain is not in the search list: setting it changes no read.
        try defaults.setVolatileDomain(["k": "volatile"], forName: "com.example.volatile")
        #expect(defaults.value(forKey: "k") == "argument")
        f.process.setLaunchArguments([])
        #expect(defaults.value(forKey: "k") == "own, again")

        sameDomain.removeObject(forKey: "k")
        #expect(defaults.value(forKey: "k") == "suite, again")
        defaults.removeSuite(named: f.group)
        #expect(defaults.value(forKey: "k") == "global")
        try defaults.removePersistentDomain(forName: "NSGlobalDomain")
        #expect(defaults.value(forKey: "k") == "registered")
        try defaults.setPersistentDomain(["k": "replaced"], forName: "com.example.app")
        #expect(defaults.value(forKey: "k") == "replaced")
    }

    /// Keys that are equal as Swift compares strings (canonical
    /// equivalence) but not byte for byte are one key, cached or not, ASCII or not.
    @Test func canonicallyEqualKeysAreOneKeyInACachedRead() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let kelvin = "\u{212A}"
        defaults.set("composed", forKey: precomposed)
        #expect(defaults.value(forKey: decomposed) == "composed")
        f.process.register(["K": "registered"])
        #expect(defaults.value(forKey: kelvin) == "registered", "U+212A KELVIN SIGN is canonically K")
        defaults.set("kelvin", forKey: kelvin)
        #expect(defaults.value(forKey: "K") == "kelvin", "a set of a key that is not ASCII reaches its ASCII equal")
        defaults.removeObject(forKey: "K")
        #expect(defaults.value(forKey: kelvin) == "registered")
        // Many keys, added by sets after the snapshot was cached, then removed.
        #expect(defaults.value(forKey: "absent") == nil)
        for index in 0..<300 { defaults.set(.integer(Int64(index)), forKey: "n-\(index)") }
        #expect((0..<300).allSatisfy { defaults.integer(forKey: "n-\($0)") == $0 })
        for index in 0..<300 where index % 2 == 0 { defaults.removeObject(forKey: "n-\(index)") }
        #expect((0..<300).allSatisfy { defaults.value(forKey: "n-\($0)") == ($0 % 2 == 0 ? nil : .integer(Int64($0))) })
        #expect(defaults.value(forKey: "") == nil)
        defaults.set("empty", forKey: "")
        #expect(defaults.value(forKey: "") == "empty")
    }

    /// Keys of every length from 0 to 20 bytes (each length of the hash's
    /// last 0–7 bytes, after 0, 1 and 2 whole words), and keys that differ
    /// from them in one byte only, each in each position: each is its own key.
    @Test func keysOfEveryLengthAndOneByteApartAreDistinctInACachedRead() throws {
        let f = Fixture()
        let defaults = try f.standard()
        let keys = (0...20).map { String(repeating: "k", count: $0) }
        for key in keys { defaults.set(.integer(Int64(key.utf8.count)), forKey: key) }
        #expect(keys.allSatisfy { defaults.integer(forKey: $0) == $0.utf8.count })
        for key in keys where !key.isEmpty {
            for position in 0..<key.utf8.count {
                var bytes = Array(key.utf8)
                bytes[position] = UInt8(ascii: "j")
                let near = String(decoding: bytes, as: UTF8.self)
                #expect(defaults.value(forKey: near) == nil, "\(near) is not \(key)")
            }
        }
    }

    /// A reload that found another process's write (here the file changed
    /// behind the domain's back) reaches a cached read.
    @Test func aReloadReachesTheNextCachedRead() throws {
        let f = Fixture()
        let defaults = try f.suite()
        defaults.set("mine", forKey: "k")
        try defaults.flush()
        #expect(defaults.value(forKey: "k") == "mine")
        try DomainFiles(root: SimulationRoot(path: f.root.path), device: "iPhone").update(f.group) { $0["k"] = "disk" }
        defaults.own.reloadNow()
        #expect(defaults.value(forKey: "k") == "disk")
    }

    /// A read while nothing moved allocates nothing: no snapshot is built,
    /// nothing is copied, only the value is handed out.
    @Test(.enabled(if: allocation_counter_is_available() != 0, "a sanitizer's runtime owns malloc in this build"))
    func aCachedReadAllocatesNothing() throws {
        let f = Fixture()
        let defaults = try f.standard()
        f.process.setLaunchArguments(["-flag", "YES", "-name", "argument"])
        f.process.register(["registered": 42])
        try defaults.setPersistentDomain(["global": "a value longer than a small string holds"], forName: "NSGlobalDomain")
        let suite = try f.suite()
        suite.set("suite value", forKey: "in-suite")
        try defaults.addSuite(named: f.group)
        for index in 0..<100 { defaults.set(.string("value \(index), longer than a small string"), forKey: "key-\(index)") }
        // Caches the snapshot; each kind of read once, so anything made once per process is made.
        #expect(defaults.string(forKey: "key-50") == "value 50, longer than a small string")
        #expect(defaults.integer(forKey: "registered") == 42 && defaults.bool(forKey: "flag") && defaults.value(forKey: "absent") == nil)

        // The counter sees this thread's allocations at all.
        allocation_counter_start()
        let made = [Int](repeating: 7, count: 64)
        let seen = allocation_counter_stop()
        #expect(seen >= 1, "the counter saw none of an array's allocation: it counts nothing in this build")

        var sink = made.count
        let builds = defaults.snapshotBuildCount
        allocation_counter_start()
        for _ in 0..<1000 {
            sink &+= defaults.string(forKey: "key-50")?.utf8.count ?? 0
            sink &+= defaults.integer(forKey: "registered")
            sink &+= defaults.bool(forKey: "flag") ? 1 : 0
            sink &+= defaults.value(forKey: "absent") == nil ? 1 : 0
        }
        let allocations = allocation_counter_stop()
        #expect(allocations == 0, "4,000 cached reads allocated \(allocations) times")
        #expect(defaults.snapshotBuildCount == builds, "the reads were cached")
        #expect(sink > 0)
    }
}
