import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// `NSUbiquitousKeyValueStore` as Foundation code uses it: typed accessors,
/// the missing entitlement said loudly, and notifications from another device
/// with Apple's userInfo, through a real cloud and real agents.
@Suite(.serialized) struct UbiquitousStoreFaceTests {
    let fixture = FaceFixture()

    func store(device: String = "iPhone", entitled: Bool = true, report: (Diagnostic) -> Void = { _ in }) -> NSUbiquitousKeyValueStore {
        let process = SimulatedProcess(
            identity: ProcessIdentity(
                root: SimulationRoot(path: fixture.root.path), device: device, bundleIdentifier: "com.example.app"))
        return GroupSim.ubiquitousStore(
            of: process, environment: entitled ? [GroupSim.keyValueStoreVariable: "com.example.kvs"] : [:], report: report)
    }

    @Test func typedAccessorsConvertAsFoundationDoes() {
        let kvs = store()
        kvs.set("Paul", forKey: "username")
        kvs.set(Int64(42), forKey: "count")
        kvs.set(2.5, forKey: "ratio")
        kvs.set(true, forKey: "flag")
        kvs.set(Data([1, 2, 3]), forKey: "blob")
        kvs.set(["a", 1] as [Any], forKey: "list")
        kvs.set(["k": "v"] as [String: Any], forKey: "map")
        #expect(kvs.string(forKey: "username") == "Paul")
        #expect(kvs.string(forKey: "count") == nil)
        #expect(kvs.longLong(forKey: "count") == 42)
        #expect(kvs.longLong(forKey: "ratio") == 2)
        #expect(kvs.double(forKey: "count") == 42)
        #expect(kvs.bool(forKey: "flag") && kvs.bool(forKey: "count") && !kvs.bool(forKey: "username"))
        #expect(kvs.data(forKey: "blob") == Data([1, 2, 3]))
        #expect(kvs.array(forKey: "list")?.count == 2)
        #expect(kvs.dictionary(forKey: "map")?["k"] as? String == "v")
        #expect(kvs.longLong(forKey: "missing") == 0 && kvs.object(forKey: "missing") == nil)
        kvs.removeObject(forKey: "username")
        #expect(kvs.object(forKey: "username") == nil)
        #expect(kvs.dictionaryRepresentation.count == 6)
        // Signed out (no account on the device): synchronize() is false, as without iCloud.
        #expect(!kvs.synchronize())
        // Another process of the device (a new object on the same copy) sees the values.
        #expect(store().longLong(forKey: "count") == 42)
    }

    @Test func withoutTheEntitlementTheStoreStaysOnTheDeviceAndSaysSo() throws {
        var reported: [String] = []
        let kvs = store(entitled: false) { reported.append($0.message) }
        kvs.set("x", forKey: "k")
        #expect(kvs.string(forKey: "k") == "x")
        #expect(!kvs.synchronize())
        #expect(reported.contains { $0.contains("no com.apple.developer.ubiquity-kvstore-identifier entitlement") }, "\(reported)")
        // Not registered with the device's agent: it is never synced.
        let settings = try groupsim(["cloud", "status"], root: fixture.root)
        #expect(!settings.stdout.contains("com.example.app  "), "\(settings.stdout)")
    }

    /// The missing entitlement is the process's, not an instance's: said once
    /// however many stores the process makes, as a device logs it once.
    @Test func theMissingEntitlementIsSaidOncePerProcess() {
        let reported = Received.Lines()
        let process = SimulatedProcess(
            identity: ProcessIdentity(
                root: SimulationRoot(path: fixture.root.path), bundleIdentifier: "com.example.app"))
        for _ in 0..<3 {
            let kvs = GroupSim.ubiquitousStore(of: process, environment: [:]) { reported.add($0.message) }
            kvs.set("x", forKey: "k")
        }
        #expect(reported.all.count == 1, "\(reported.all)")
        // Another process says it again.
        let other = SimulatedProcess(identity: process.identity)
        _ = GroupSim.ubiquitousStore(of: other, environment: [:]) { reported.add($0.message) }
        #expect(reported.all.count == 2)
    }

    @Test func aWriteOnAnotherDevicePostsTheNotificationWithReasonAndKeys() throws {
        // A device is made before it is signed in (a name that does not exist is a typo).
        #expect(try groupsim(["device", "create", "iPad"], root: fixture.root).status == 0)
        for device in ["iPhone", "iPad"] {
            #expect(try groupsim(["cloud", "account", "sign-in", "alice", "--device", device], root: fixture.root).status == 0)
        }
        let tool = BuiltExecutable.path("groupsim")
        let server = try RunningProcess(tool, ["cloud", "serve", "--root", fixture.root.path])
        defer { server.kill() }
        try server.waitForLine(timeout: 20) { $0.contains("\"listening\"") }
        var agents: [RunningProcess] = []
        defer { for agent in agents { agent.kill() } }
        for device in ["iPhone", "iPad"] {
            let agent = try RunningProcess(tool, ["cloud", "agent", "--root", fixture.root.path, "--device", device])
            try agent.waitForLine(timeout: 20) { $0.contains("\"connected\"") }
            agents.append(agent)
        }
        let pad = store(device: "iPad")
        let received = NotificationLog()
        let token = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: pad, queue: nil
        ) {
            received.add($0.userInfo ?? [:])
        }
        defer { NotificationCenter.default.removeObserver(token) }
        #expect(received.wait { ($0[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber)?.intValue == NSUbiquitousKeyValueStoreInitialSyncChange })
        #expect(try groupsim(["cloud", "write", "--device", "iPhone", "com.example.kvs", "theme", #""dark""#], root: fixture.root).status == 0)
        #expect(
            received.wait { info in
                (info[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber)?.intValue == NSUbiquitousKeyValueStoreServerChange
                    && (info[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String]) == ["theme"]
            })
        #expect(pad.string(forKey: "theme") == "dark")
        #expect(pad.synchronize())
    }
}

/// Notifications' userInfo as they arrive, waited on with a timeout.
/// Unchecked Sendable: the items are read and changed under `condition`'s lock.
final class NotificationLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [[AnyHashable: Any]] = []

    func add(_ info: [AnyHashable: Any]) {
        condition.withLock { items.append(info) }
        condition.broadcast()
    }

    var count: Int { condition.withLock { items.count } }

    func wait(timeout: TimeInterval = 20, until matches: ([AnyHashable: Any]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !items.contains(where: matches) {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }
}
