import AppProtocol
import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// The control channel's own rules, in this process over a socket pair
/// (ControlChannelProcessTests drives real programs): a peer that does not
/// read never holds up the program, over-long and malformed lines are
/// refused and the channel goes on, a peer that closes ends the channel.
/// Serialized: a process has one channel's tap at a time.
@Suite(.serialized) struct ControlChannelTests {
    /// A channel serving `process`'s defaults, and the peer's end, read line by line.
    private func serve(_ process: SimulatedProcess, limits: ControlChannel.Limits = .init()) throws -> (ControlChannel, LineConnection) {
        let (channel, peerEnd) = try serveUnread(process, limits: limits)
        return (channel, LineConnection(descriptor: peerEnd))
    }

    /// A channel serving `process`'s defaults, and the peer's end of the socket, which nothing reads until the
    /// test wraps it in a `LineConnection` (whose thread reads at once, all the time).
    private func serveUnread(_ process: SimulatedProcess, limits: ControlChannel.Limits = .init()) throws -> (ControlChannel, Int32) {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        let channel = try ControlChannel.serve(descriptor: ends[0], limits: limits, process: process)
        return (channel, ends[1])
    }

    private func response(_ peer: LineConnection, id: PlistValue?) throws -> ProtocolResponse {
        var found: ProtocolResponse?
        try peer.waitForLine(timeout: 20) { line in
            guard case .response(let response)? = try? ControlProtocol.decode(line).message, response.fields["id"] == id else { return false }
            found = response
            return true
        }
        return try #require(found)
    }

    /// The next `delivery` event on the channel that satisfies `matches`.
    private func delivery(_ peer: LineConnection, where matches: (Delivery) -> Bool) throws -> Delivery {
        var found: Delivery?
        try peer.waitForLine(timeout: 20) { line in
            guard case .event(.delivery(let delivery), _)? = try? ControlProtocol.decode(line).message, matches(delivery) else { return false }
            found = delivery
            return true
        }
        return try #require(found)
    }

    /// Each of the program's observing mechanisms is named, with the key,
    /// the values and where the change came from.
    @Test func everyMechanismIsNamedWithItsKeyAndValue() throws {
        let f = FaceFixture()
        let process = f.process()
        let (channel, peer) = try serve(process)
        let defaults = try #require(GroupSim.defaults(suiteName: f.group, of: process))
        let observation = GroupSim.observe(defaults, "theme") { _ in }
        let observer = ThemeObserver()
        defaults.addObserver(observer, forKeyPath: "theme", options: [.new], context: nil)
        let keyPathObservation = defaults.observe(\.controlTestTheme, options: [.new]) { _, _ in }

        #expect(try groupsim(["defaults", "write", f.group, "theme", "dark"], root: f.root).status == 0)
        for mechanism in [DeliveryMechanism.observe, .keyValueObserver, .keyPathObservation] {
            let delivered = try delivery(peer) { $0.mechanism == mechanism && $0.key == "theme" }
            #expect(delivered.new == .string("dark") && delivered.old == nil, "\(mechanism)")
            #expect(delivered.origin == "other-process" && delivered.domain == f.group, "\(mechanism)")
        }
        defaults.set("light", forKey: "theme")
        for mechanism in DeliveryMechanism.allCases where mechanism != .didChangeExternally {
            let delivered = try delivery(peer) { $0.mechanism == mechanism && $0.key == "theme" && $0.new == .string("light") }
            #expect(delivered.origin == "this-process", "\(mechanism)")
        }
        #expect(observer.calls == 2)
        withExtendedLifetime((observation, keyPathObservation)) {}
        defaults.removeObserver(observer, forKeyPath: "theme")
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    /// `didChangeExternallyNotification`, through a real cloud and two devices' agents.
    @Test func iCloudNotificationsAreNamedWithReasonAndKeys() throws {
        let f = FaceFixture()
        #expect(try groupsim(["device", "create", "iPad"], root: f.root).status == 0)
        for device in ["iPhone", "iPad"] {
            #expect(try groupsim(["cloud", "account", "sign-in", "alice", "--device", device], root: f.root).status == 0)
        }
        let tool = BuiltExecutable.path("groupsim")
        let server = try RunningProcess(tool, ["cloud", "serve", "--root", f.root.path])
        defer { kill(server.pid, SIGKILL) }
        try server.waitForLine(timeout: 20) { $0.contains("\"listening\"") }
        var agents: [RunningProcess] = []
        defer { for agent in agents { kill(agent.pid, SIGKILL) } }
        for device in ["iPhone", "iPad"] {
            let agent = try RunningProcess(tool, ["cloud", "agent", "--root", f.root.path, "--device", device])
            try agent.waitForLine(timeout: 20) { $0.contains("\"connected\"") }
            agents.append(agent)
        }
        let pad = SimulatedProcess(
            identity: ProcessIdentity(
                root: SimulationRoot(path: f.root.path), device: "iPad", bundleIdentifier: "com.example.app"))
        let (channel, peer) = try serve(pad)
        let store = GroupSim.ubiquitousStore(of: pad, environment: [GroupSim.keyValueStoreVariable: "com.example.kvs"])
        // Apple's pattern: the program registers for the notification (nothing is posted to a store no one could hear yet).
        let token = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
        ) { _ in }
        defer { NotificationCenter.default.removeObserver(token) }
        #expect(try groupsim(["cloud", "write", "--device", "iPhone", "com.example.kvs", "theme", #""dark""#], root: f.root).status == 0)
        let delivered = try delivery(peer) { $0.mechanism == .didChangeExternally && $0.reason == "server-change" }
        #expect(delivered.keys == ["theme"] && delivered.domain == "com.example.kvs" && delivered.origin == "other-device")
        withExtendedLifetime(store) {}
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    /// `kvs-` requests use the program's iCloud store; without the
    /// entitlement it stays on the device, and the warning reaches the driver.
    @Test func iCloudRequestsAndTheMissingEntitlementWarning() throws {
        let f = FaceFixture()
        let (channel, peer) = try serve(f.process())
        try peer.waitForLine(timeout: 20) { $0.hasPrefix(#"{"event":"ready""#) }
        peer.write(ControlProtocol.requestLine(id: 1, .cloudSet(key: "theme", value: .string("dark"))))
        // Said as the store is made, so before the response.
        let warning = try peer.waitForLine(timeout: 20) { $0.contains(#""kind":"missing-entitlement""#) }
        #expect(warning.contains("ubiquity-kvstore-identifier"))
        #expect(try response(peer, id: .integer(1)).ok)
        peer.write(ControlProtocol.requestLine(id: 2, .cloudGet(key: "theme")))
        #expect(try response(peer, id: .integer(2)).value == .string("dark"))
        peer.write(ControlProtocol.requestLine(id: 3, .cloudSynchronize))
        #expect(try response(peer, id: .integer(3)).value == .bool(false), "no account, no entitlement")
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    /// A write over the iCloud store's limits: the notification the program
    /// gets (reason quota-violation-change) and a `quota-violation` warning.
    @Test func aWriteOverTheICloudQuotaIsDeliveredAndWarned() throws {
        let f = FaceFixture()
        let process = f.process()
        let (channel, peer) = try serve(process)
        let store = GroupSim.ubiquitousStore(of: process, environment: [GroupSim.keyValueStoreVariable: "com.example.kvs"])
        let token = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
        ) { _ in }
        defer { NotificationCenter.default.removeObserver(token) }
        let key = "big"
        store.set(Data(count: 1_048_577), forKey: key)  // a value may have at most 1 MB
        let delivered = try delivery(peer) { $0.mechanism == .didChangeExternally }
        #expect(delivered.reason == "quota-violation-change" && delivered.keys == [key] && delivered.domain == "com.example.kvs")
        let warning = try peer.waitForLine(timeout: 20) { $0.contains(#""kind":"quota-violation""#) }
        #expect(warning.contains(key))
        withExtendedLifetime(store) {}
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    /// A channel made for one simulated process (as a test's or a benchmark's
    /// is) sends only that process's events: another one's, in the same
    /// program (another test beside it), never reach it, not even to fill it.
    @Test func anotherProcesssDeliveriesNeverReachTheChannel() throws {
        let f = FaceFixture()
        let process = f.process()
        let (channel, peer) = try serve(process)
        let other = GroupSim.defaults(of: f.process())
        let otherObservation = GroupSim.observe(other, "theme") { _ in }
        other.set("not-yours", forKey: "theme")
        let own = GroupSim.defaults(of: process)
        let ownObservation = GroupSim.observe(own, "theme") { _ in }
        own.set("yours", forKey: "theme")
        // The first delivery of "theme" the peer reads is its own process's: the other's came first and was never sent.
        let first = try delivery(peer) { $0.key == "theme" }
        #expect(first.new == .string("yours"))
        withExtendedLifetime((otherObservation, ownObservation)) {}
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    @Test(.timeLimit(.minutes(2))) func aPeerThatNeverReadsDoesNotHoldUpTheProgram() throws {
        let f = FaceFixture()
        var limits = ControlChannel.Limits()
        limits.maximumOutgoingBytes = 8192
        let process = f.process()
        let (channel, peerEnd) = try serveUnread(process, limits: limits)
        let defaults = GroupSim.defaults(of: process)
        let observation = GroupSim.observe(defaults, "counter") { _ in }
        // Each set is two deliveries (the observer, didChangeNotification): far
        // more than the socket and the outgoing limit hold. Nobody reads.
        for value in 0..<5000 { defaults.set(value, forKey: "counter") }
        withExtendedLifetime(observation) {}
        #expect(channel.eventsDropped > 0)

        // Once the peer reads, it is told what it missed, and info counts it.
        let peer = LineConnection(descriptor: peerEnd)
        let warning = try peer.waitForLine(timeout: 20) { $0.contains(#""kind":"events-dropped""#) }
        #expect(warning.contains("dropped"))
        peer.write(ControlProtocol.requestLine(id: 1, .info))
        let info = try response(peer, id: .integer(1))
        guard case .integer(let dropped)? = info.fields["info"]?.dictionaryValue?["droppedEvents"] else {
            Issue.record("no droppedEvents in \(info.fields)")
            return
        }
        #expect(dropped >= 1)
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    /// Requests sent without reading the responses: they wait for room, none
    /// is lost, and they are answered in order once the peer reads.
    @Test(.timeLimit(.minutes(2))) func responsesAreNeverDroppedOnlyDelayed() throws {
        let f = FaceFixture()
        var limits = ControlChannel.Limits()
        limits.maximumOutgoingBytes = 4096
        let process = f.process()
        let (channel, peerEnd) = try serveUnread(process, limits: limits)
        let defaults = GroupSim.defaults(of: process)
        defaults.set(String(repeating: "v", count: 1000), forKey: "big")
        let requests = Array(((1...2000).map { ControlProtocol.requestLine(id: $0, .get(key: "big")) }.joined(separator: "\n") + "\n").utf8)
        // Written from another thread: the socket fills up while nobody reads.
        let sender = Thread {
            var offset = 0
            while offset < requests.count {
                let count = requests[offset...].withUnsafeBytes { send(peerEnd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count < 0, errno != EINTR { return }
                offset += max(count, 0)
            }
        }
        sender.start()
        defaults.set("still running", forKey: "other")
        #expect(defaults.string(forKey: "other") == "still running")
        let peer = LineConnection(descriptor: peerEnd)
        for id in 1...2000 {
            let answer = try response(peer, id: .integer(Int64(id)))
            #expect(answer.value?.stringValue?.count == 1000)
        }
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    @Test func overlongAndMalformedLinesAreRefusedAndTheChannelGoesOn() throws {
        let f = FaceFixture()
        var limits = ControlChannel.Limits()
        limits.maximumLineBytes = 4096
        let (channel, peer) = try serve(f.process(), limits: limits)
        try peer.waitForLine(timeout: 20) { $0.hasPrefix(#"{"event":"ready""#) }

        peer.writeRaw(Array(String(repeating: "x", count: 10_000).utf8))
        peer.write(#"{"id":"still part of the long line","cmd":"ping"}"#)
        #expect(try response(peer, id: nil).error?.contains("longer than 4096 bytes") == true)
        peer.write("garbage")
        #expect(try response(peer, id: nil).error?.contains("invalid JSON") == true)
        peer.write(#"{"id":2,"cmd":"fly"}"#)
        #expect(try response(peer, id: .integer(2)).error?.contains("unknown command") == true)
        peer.write(ControlProtocol.requestLine(id: 3, .set(key: "k", value: .integer(7))))
        #expect(try response(peer, id: .integer(3)).ok)
        peer.write(ControlProtocol.requestLine(id: 4, .get(key: "k")))
        let got = try response(peer, id: .integer(4))
        #expect(got.value == .integer(7) && got.domain == "com.example.app")
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
    }

    /// The peer closing ends the channel, and nothing of the program's: its
    /// defaults, observers and notifications go on.
    @Test func aPeerThatClosesEndsOnlyTheChannel() throws {
        let f = FaceFixture()
        let process = f.process()
        let (channel, peer) = try serve(process)
        try peer.waitForLine(timeout: 20) { $0.hasPrefix(#"{"event":"ready""#) }
        peer.close()
        #expect(channel.waitUntilEnded(timeout: 20))
        let defaults = GroupSim.defaults(of: process)
        let received = Received()
        let observation = GroupSim.observe(defaults, "after") { received.add($0) }
        defaults.set("yes", forKey: "after")
        #expect(received.all.count == 1)
        #expect(defaults.string(forKey: "after") == "yes")
        withExtendedLifetime(observation) {}
    }
}

/// An observer in Apple's shape, counting its calls.
/// Unchecked Sendable: the count is under `lock`.
private final class ThemeObserver: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var calls: Int { lock.withLock { count } }

    override func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        lock.withLock { count += 1 }
    }
}

extension UserDefaults {
    /// A property for `observe(\.controlTestTheme, …)`: it reads the key "theme".
    var controlTestTheme: String? { string(forKey: "theme") }
}
