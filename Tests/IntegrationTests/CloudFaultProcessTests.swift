import CloudClient
import CloudDevice
import CloudModel
import CloudService
import DeviceState
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// The cloud and the sync agents as real processes, given what no agent
/// sends and what no device keeps: hostile messages, damaged settings and
/// copies, clocks years ahead, floods, a stopped or lost cloud, limits.
@Suite(.serialized) struct CloudFaultProcessTests: CloudProcessSuite {
    let root = TemporaryRoot()

    @Test func hostileMessagesGetAnErrorAndTheCloudKeepsServing() throws {
        let server = try startCloud()
        let location = try location()
        let endpoint = try endpoint()
        let secret = try secret(of: "iPhone")
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let frames = [
            "not json at all",
            "[1, 2, 3]",
            #"{"type":"upload","store":"s","changes":[]}"#,
            #"{"type":"hello","device":"../escape","account":"alice","stores":{}}"#,
            #"{"type":"hello","device":"iPhone","account":"alice","stores":{"s":-1}}"#,
            #"{"type":"hello","device":"iPhone","account":"alice","stores":{"s":\#(deep)}}"#,
            #"{"type":"hello","device":"iPhone","account":"alice","stores":{"s":99999999999999999999}}"#,
            #"{"type":"subscribe","store":"s","since":0}"#,
        ]
        let replies = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: frames, replies: frames.count)
        }
        #expect(replies.count == frames.count, "\(replies)")
        for (frame, reply) in zip(frames, replies) {
            #expect(reply.contains("\"type\":\"error\""), "\(frame.prefix(60)) → \(reply.prefix(200))")
        }
        #expect(replies.joined().contains("the first message of a connection must be hello"))
        #expect(replies.joined().contains("this connection showed the secret of iPhone"))
        // A well-formed hello on a new connection still works.
        let hello = #"{"type":"hello","device":"iPhone","account":"alice","stores":{"s":0}}"#
        let answer = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [hello], replies: 2)
        }
        #expect(answer.first?.contains("\"type\":\"welcome\"") == true, "\(answer)")
        #expect(answer.last?.contains("\"initial\":true") == true, "\(answer)")
        // The HTTP face answers bad requests with a reason and keeps serving.
        let badFault = Result {
            try CloudClient.blocking { try await CloudClient.request(endpoint, path: "/v1/faults/iPhone", body: ["latencyMs": -5]) }
        }
        #expect("\(badFault)".contains("latencyMs"), "\(badFault)")
        let unknown = Result { try CloudClient.blocking { try await CloudClient.request(endpoint, path: "/v1/nothing") } }
        #expect("\(unknown)".contains("404"), "\(unknown)")
        let status = try CloudClient.blocking { try await CloudClient.request(endpoint, path: "/v1/status") }
        #expect(status.dictionaryValue?["server"] != nil)
        withExtendedLifetime(server) {}
    }

    @Test func aMalformedDeviceFileStopsNoProcessAndIsNamed() throws {
        let folder = root.path + "/devices/iPhone/cloud"
        try FileManager.default.createDirectory(atPath: folder + "/stores", withIntermediateDirectories: true)
        // Settings of the wrong shape: the write still happens on the device, and the file is named.
        try Data(BinaryPropertyList.encode(.dictionary(["account": .integer(5)]))).write(to: URL(fileURLWithPath: folder + "/device.plist"))
        let settings = try groupsim(["cloud", "write", "com.example.kvs", "k", "1"], root: root)
        #expect(settings.status == 0, "\(settings.stderr)")
        #expect(
            settings.stderr.contains(folder + "/device.plist") && settings.stderr.contains("account must be a non-empty string"), "\(settings.stderr)"
        )
        // A store copy of the wrong shape: writes are refused naming the file and field; the file is left as it was.
        let store = folder + "/stores/com.example.other.plist"
        let malformed = BinaryPropertyList.encode(.dictionary(["values": .string("not a dictionary")]))
        try Data(malformed).write(to: URL(fileURLWithPath: store))
        let write = try groupsim(["cloud", "write", "com.example.other", "k", "1"], root: root)
        #expect(write.status != 0)
        #expect(write.stderr.contains(store) && write.stderr.contains("values must be an object"), "\(write.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == Data(malformed))
    }

    /// One impossible number in a device's settings (a clock skew of
    /// Int64.min, as a hand edit or a tool may leave) made the next app
    /// write move the whole file aside: the device fell to no account, its
    /// agent signed it out, and the write it had made offline was gone. Now
    /// the number is ignored and said (file, field, value), the account
    /// stays, and the offline write reaches the cloud once the device is online.
    @Test func anImpossibleNumberInTheSettingsSignsNoDeviceOut() throws {
        let (server, agent) = try signedInWithAWriteMadeOffline()
        let path = root.path + "/devices/iPhone/cloud/device.plist"
        var fields = try DeviceCloud(root: simulation, device: "iPhone").readSettings().plist
        fields["clockSkewMilliseconds"] = .integer(.min)
        try Data(BinaryPropertyList.encode(.dictionary(fields))).write(to: URL(fileURLWithPath: path))
        let later = try groupsim(["cloud", "write", "com.example.kvs", "later", "2", "--device", "iPhone"], root: root)
        #expect(later.status == 0, "\(later.stderr)")
        #expect(later.stderr.contains(path) && later.stderr.contains("clockSkewMilliseconds is \(Int64.min)"), "\(later.stderr)")
        try agent.waitFor("problem") { $0.contains("clockSkewMilliseconds is \(Int64.min)") }
        #expect(try DeviceCloud(root: simulation, device: "iPhone").readSettings().account == "alice")
        #expect(try groupsim(["cloud", "network", "--device", "iPhone", "online"], root: root).status == 0)
        try until(agent) { try cloudValue("offline") == .integer(1) && cloudValue("later") == .integer(2) }
        #expect(
            !agent.process.allLines.contains { $0.contains("\"event\":\"account\"") && $0.contains("\"account\":\"none\"") },
            "the agent signed the device out")
        withExtendedLifetime(server) {}
    }

    /// A settings file that cannot be decoded at all is left as it is (it
    /// holds the account): an app's write stays on the device and names the
    /// file, the agent says it and waits, and nothing the device holds goes.
    @Test func anUnreadableSettingsFileIsLeftAsItIsAndSignsNoDeviceOut() throws {
        let (server, agent) = try signedInWithAWriteMadeOffline()
        let path = root.path + "/devices/iPhone/cloud/device.plist"
        let garbage = Data("bplist00 not really".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))
        let later = try groupsim(["cloud", "write", "com.example.other", "k", "2", "--device", "iPhone"], root: root)
        #expect(later.stderr.contains(path), "\(later.stderr)")
        try agent.waitFor("problem") { $0.contains("device.plist") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage, "the settings file was replaced")
        let copy = try #require(try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs"))
        #expect(copy.account == "alice" && copy.values["offline"] == .integer(1) && copy.pending["offline"] != nil)
        #expect(
            !agent.process.allLines.contains { $0.contains("\"event\":\"account\"") && $0.contains("\"account\":\"none\"") },
            "the agent signed the device out")
        withExtendedLifetime(server) {}
    }

    /// A device whose clock is years ahead writes a key: the cloud keeps the
    /// write a day ahead of its own clock at most, and both devices' copies
    /// end with that stamp (the writer's ack carries it), so every device and
    /// the cloud order later writes of the key the same way.
    @Test func aWriteFromAClockYearsAheadIsKeptADayAheadEverywhere() throws {
        let (server, phone, pad) = try twoDevicesHoldingK1()
        let years = 5 * 365 * CloudLimits.maximumStampLeadMilliseconds
        #expect(try groupsim(["cloud", "network", "--device", "iPhone", "skew", "\(years)"], root: root).status == 0)
        try write("k1", "2", device: "iPhone")
        try until(pad) { try deviceValue("k1", device: "iPad") == .integer(2) }
        let phoneCopy = DeviceCloud(root: simulation, device: "iPhone")
        try until(phone) { try phoneCopy.readStore("com.example.kvs")?.pending.isEmpty == true }
        guard case .integer(let cloudStamp)? = try cloudStore("com.example.kvs", account: "alice")["k1"]?.dictionaryValue?["time"] else {
            throw CloudTestFailure("the cloud's record of k1 has no time")
        }
        #expect(cloudStamp <= DeviceCloudSettings.realTime() + CloudLimits.maximumStampLeadMilliseconds, "kept \(cloudStamp)")
        let padStamp = try DeviceCloud(root: simulation, device: "iPad").readStore("com.example.kvs")?.stamps["k1"]
        #expect(padStamp?.time == cloudStamp)
        try until(phone) { try phoneCopy.readStore("com.example.kvs")?.stamps["k1"]?.time == cloudStamp }
        withExtendedLifetime(server) {}
    }

    /// A device churning keys (written, then removed) sends the cloud far
    /// more removals than a store keeps: every other device's copy stays
    /// bounded as the cloud's store does, and what is live stays.
    @Test func aFloodOfRemovalsLeavesEveryDevicesCopyBounded() throws {
        let (server, phone, pad) = try twoDevicesHoldingK1()
        let phoneStore = try UbiquitousStore(cloud: DeviceCloud(root: simulation, device: "iPhone"), identifier: "com.example.kvs")
        for round in 0..<6 {
            for index in 0..<1_000 { try phoneStore.set(.integer(Int64(index)), forKey: "churn\(round)-\(index)") }
            for index in 0..<1_000 { try phoneStore.set(nil, forKey: "churn\(round)-\(index)") }
            try phoneStore.flush()
        }
        try phoneStore.set("done", forKey: "marker")
        try phoneStore.flush()
        let padCloud = DeviceCloud(root: simulation, device: "iPad")
        do {
            try until(pad, timeout: 60) { try padCloud.readStore("com.example.kvs")?.values["marker"] == "done" }
        } catch {
            let tail = { (child: CloudChild) in child.process.allLines.suffix(6).map { String($0.prefix(300)) }.joined(separator: "\n") }
            throw CloudTestFailure("\(error)\niPhone's agent:\n\(tail(phone))\niPad's agent:\n\(tail(pad))\ncloud:\n\(tail(server))")
        }
        let copy = try #require(try padCloud.readStore("com.example.kvs"))
        #expect(copy.removalCount <= CloudLimits.keptRemovals, "\(copy.removalCount) removals kept")
        #expect(copy.values["k1"] == .integer(1) && copy.values["pad"] == .integer(0))
        withExtendedLifetime(server) {}
    }

    @Test func aMalformedCopyDoesNotStopTheDevicesOtherStoresSyncing() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        #expect(try groupsim(["cloud", "write", "com.example.bad", "k", "1"], root: root).status == 0)
        let bad = root.path + "/devices/iPhone/cloud/stores/com.example.bad.plist"
        try Data(BinaryPropertyList.encode(.dictionary(["values": .integer(3)]))).write(to: URL(fileURLWithPath: bad))
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("problem") { $0.contains("com.example.bad") && $0.contains("values must be an object") }
        #expect(try groupsim(["cloud", "write", "com.example.good", "k", "2"], root: root).status == 0)
        try agent.waitFor("acknowledged") { $0.contains("com.example.good") }
        #expect(try cloudStore("com.example.good", account: "alice")["k"]?.dictionaryValue?["value"] == .integer(2))
        withExtendedLifetime(server) {}
    }

    /// The control secret deleted under a running cloud: `cloud status` says
    /// the cloud runs and its secret cannot be read, and how to get one
    /// back (it said the cloud was "not answering").
    @Test func aCloudWhoseSecretIsGoneIsNotCalledSilent() throws {
        let server = try startCloud()
        try FileManager.default.removeItem(atPath: root.path + "/cloud/control.secret")
        let status = try groupsim(["cloud", "status"], root: root)
        #expect(status.stdout.contains("runs, but its control secret cannot be read") && status.stdout.contains("control.secret"), "\(status.stdout)")
        #expect(status.stdout.contains("groupsim cloud start") && !status.stdout.contains("not answering"), "\(status.stdout)")
        withExtendedLifetime(server) {}
    }

    @Test func aStoppedCloudMakesRequestsFailInsteadOfHanging() throws {
        let server = try startCloud()
        let endpoint = try endpoint()
        server.process.signal(SIGSTOP)
        defer { server.process.signal(SIGCONT) }
        let outcome = Result { try CloudClient.blocking { try await CloudClient.request(endpoint, path: "/v1/status", timeout: .seconds(1)) } }
        #expect("\(outcome)".contains("did not answer /v1/status within"), "\(outcome)")
    }

    /// A step that needs the cloud after it ended says how it ended (and, had
    /// it written any, its last stderr lines: a crash's or a sanitizer's report).
    @Test func aStepThatNeedsTheCloudAfterItEndedSaysHowItEnded() throws {
        let tmp = root.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let scenario = tmp + "/cloud-gone.yaml"
        try """
        summary: The cloud is killed and a step waits for it.
        devices:
          - iPhone: { account: alice }
        processes:
          phone: { role: main-app, device: iPhone }
        steps:
          - launch: phone
          - kill-cloud:
          - wait-cloud: { timeout: 2 }
        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let result = try runBounded(
            BuiltExecutable.path("groupsim"), ["run", scenario], environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(result.status != 0)
        #expect(result.stdout.contains("the cloud is not running (killed by signal 9)"), "\(result.stdout)\(result.stderr)")
    }

    /// A store copy keeps its last 32 notices. An app stopped while more
    /// arrive is told of every key that changed once it runs again, and its
    /// bridge copies every one into the app-group suite.
    @Test func aSuspendedAppIsToldOfEveryKeyThatArrivedMeanwhile() throws {
        #expect(try groupsim(["device", "create", "iPad"], root: root).status == 0)
        for device in ["iPhone", "iPad"] {
            #expect(try groupsim(["cloud", "account", "sign-in", "alice", "--device", device], root: root).status == 0)
        }
        let server = try startCloud()
        let phoneAgent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        let padAgent = try CloudChild(["agent", "--device", "iPad"], root: root)
        let app = try AppProcess(
            "main-app", root: root, manifest: Self.scenarios + "/apps/synced-notes.yaml", device: "iPhone",
            environment: ["GROUPSIM_CLOUD_AUTOSTART": "0"])
        try app.event { if case .cloudChange("initial-sync-change", _) = $0 { true } else { false } }
        let watch = try CloudChild(["watch", "com.example.synced", "--device", "iPhone"], root: root)
        try watch.waitFor("ready")
        app.process.signal(SIGSTOP)
        watch.process.signal(SIGSTOP)
        // One push, so one notice, per key: more than the copy keeps.
        let keys = (0..<(StoreCopy.keptNotices + 8)).map { "sync-k\($0)" }
        for (index, key) in keys.enumerated() {
            let write = try groupsim(["cloud", "write", "com.example.synced", key, "\(index)", "--device", "iPad"], root: root)
            #expect(write.status == 0, "\(write.stderr)")
            try phoneAgent.waitFor("applied") { $0.contains("\"\(key)\"") }
        }
        #expect(try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.synced")?.values.count == keys.count)
        app.process.signal(SIGCONT)
        watch.process.signal(SIGCONT)
        for (index, key) in keys.enumerated() {
            try app.change(key) { $0 == .integer(Int64(index)) }
        }
        // …and on disk, in the suite the widget reads.
        #expect(try app.request(.synchronize).error == nil)
        let suite = try DomainFiles(root: simulation, device: "iPhone").read("group.com.example.synced") ?? [:]
        #expect(keys.filter { suite[$0] == nil } == [], "missing in the app-group suite")
        var told = Set<String>()
        while !told.isSuperset(of: keys) {
            let line = try watch.waitFor("external-change")
            let fields = try PlistJSON.decode(PlistJSON.parse(line)).dictionaryValue ?? [:]
            #expect(fields["reason"] == .string("server-change"), "\(line)")
            told.formUnion((fields["keys"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
        withExtendedLifetime((server, padAgent)) {}
    }

    /// A value over Apple's limits stays in the device's copy, whatever its
    /// size: 9 MB (which the copy once held twice, over a suite file's 16 MiB)
    /// and 17 MB (over 16 MiB alone). Each is reported with a quota notice,
    /// readable by the device's other processes, and never uploaded.
    @Test func aValueOfManyMegabytesStaysOnTheDevice() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        let app = try AppProcess(
            "main-app", root: root, manifest: Self.scenarios + "/apps/synced-notes.yaml", device: "iPhone",
            environment: ["GROUPSIM_CLOUD_AUTOSTART": "0"])
        try app.event { if case .cloudChange("initial-sync-change", _) = $0 { true } else { false } }
        let sizes = ["nine": 9_000_000, "seventeen": 17_000_000]
        for (key, size) in sizes.sorted(by: { $0.value < $1.value }) {
            #expect(try app.request(.cloudSet(key: key, value: .string(String(repeating: "x", count: size))), timeout: 60).error == nil)
            try app.event(timeout: 60) { if case .cloudChange("quota-violation-change", [key]) = $0 { true } else { false } }
        }
        // A value within the limits still goes up, after the big ones.
        #expect(try app.request(.cloudSet(key: "small", value: "syncs")).error == nil)
        try agent.waitFor("acknowledged", timeout: 60)
        let device = DeviceCloud(root: simulation, device: "iPhone")
        let copy = try #require(try device.readStore("com.example.synced"))
        for (key, size) in sizes {
            #expect(copy.values[key]?.stringValue?.utf8.count == size, "\(key) is not in the device's copy whole")
            #expect(copy.pending[key]?.overQuota == true)
        }
        // Each value is in the file once.
        let file = try FileManager.default.attributesOfItem(atPath: try device.storePath("com.example.synced"))[.size] as? Int ?? 0
        #expect(file < sizes.values.reduce(0, +) + (1 << 20), "the copy is \(file) bytes")
        let records = try cloudStore("com.example.synced", account: "alice")
        #expect(records["small"]?.dictionaryValue?["value"] == .string("syncs"))
        #expect(records["nine"] == nil && records["seventeen"] == nil)
        withExtendedLifetime(server) {}
    }

    /// Apple gives 1 MB for the store and for one value: one value of 1 MB
    /// (under a key of 64 bytes) fits an empty store and syncs.
    @Test func oneValueOfOneMegabyteFillsTheStore() throws {
        try expectScenarioPasses("quota-one-value-fills-the-store")
    }

    /// iCloud uploads a few times a minute: a burst arrives elsewhere as two
    /// changes with the final value, and an app counting notifications counts wrong.
    @Test(arguments: ["throttle-burst-coalesced", "throttle-app-assumed-each-write"])
    func throttledUploadsCoalesceWrites(_ scenario: String) throws {
        try expectScenarioPasses(scenario)
    }

    /// A write made before the first download gives way to the cloud's value
    /// (initial-sync-change); written after it, it wins.
    @Test(arguments: ["throttle-write-before-first-download", "throttle-write-after-first-download"])
    func writesAroundTheFirstDownload(_ scenario: String) throws {
        try expectScenarioPasses(scenario)
    }

    /// `groupsim cloud network upload-interval` sets the device's interval, which status shows; a bad amount is refused.
    @Test func theUploadIntervalIsSetAndShownByTheCLI() throws {
        #expect(try groupsim(["cloud", "network", "--device", "iPhone", "upload-interval", "15000"], root: root).status == 0)
        #expect(try DeviceCloud(root: simulation, device: "iPhone").readSettings().uploadIntervalMilliseconds == 15000)
        #expect(try groupsim(["cloud", "status"], root: root).stdout.contains("uploads every 15000 ms"))
        let bad = try groupsim(["cloud", "network", "--device", "iPhone", "upload-interval", "600001"], root: root)
        #expect(bad.status != 0 && bad.stderr.contains("upload-interval takes a number from 0 to 600000 ms"), "\(bad.stderr)")
    }

    /// The upload interval counts on the device's simulated clock: a write held
    /// for an interval of ten minutes goes up once the clock is advanced past it,
    /// with no real wait (ten real minutes would outlast every wait here).
    @Test func aHeldUploadGoesWhenTheDevicesClockPassesTheInterval() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        #expect(try groupsim(["cloud", "network", "--device", "iPhone", "upload-interval", "600000"], root: root).status == 0)
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try write("k", "1", device: "iPhone")
        try until(agent) { try cloudValue("k") == .integer(1) }
        try write("k", "2", device: "iPhone")
        try agent.waitFor("throttled")
        let advanced = try groupsim(["device", "clock", "iPhone", "--advance", "10m"], root: root)
        #expect(advanced.status == 0, "\(advanced.stderr)")
        try until(agent, timeout: 60) { try cloudValue("k") == .integer(2) }
        withExtendedLifetime(server) {}
    }

    /// A clock file the agent cannot read is said, with its path, and uploads go on (on the last offset read well).
    @Test func aDamagedClockFileIsSaidAndUploadsGoOn() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let clock = try DeviceClock(root: simulation, device: "iPhone").path
        try FileManager.default.createDirectory(atPath: (clock as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(BinaryPropertyList.encode(.dictionary(["offset": .string("soon")]))).write(to: URL(fileURLWithPath: clock))
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try write("k", "1", device: "iPhone")
        let said = try agent.waitFor("problem") { $0.contains("clock.plist") }
        #expect(said.contains("offset is") && said.contains("the upload interval counts from the clock's last offset read, 0.0 s"), "\(said)")
        try until(agent) { try cloudValue("k") == .integer(1) }
        withExtendedLifetime(server) {}
    }

    @Test func networkFaultsWithoutACloudAreRefusedWithTheWayOut() throws {
        let result = try groupsim(["cloud", "network", "partition"], root: root)
        #expect(result.status != 0)
        #expect(result.stderr.contains("the cloud is not started in \(root.path)"), "\(result.stderr)")
        #expect(result.stderr.contains("groupsim cloud serve"), "\(result.stderr)")
        let typo = try groupsim(["cloud", "network", "latency"], root: root)
        #expect(typo.status != 0)
        #expect(typo.stderr.contains("latency MS"), "\(typo.stderr)")
    }
}
