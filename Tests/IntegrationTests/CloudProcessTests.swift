import CloudDevice
import CloudService
import Foundation
import GroupDefaults
import PropertyList
import Testing
import TestSupport

/// The cloud and the sync agents as real processes over real sockets: what
/// the cloud acknowledged survives kill -9, and no message a peer can send
/// stops it.
@Suite(.serialized) struct CloudProcessTests {
    let root = TemporaryRoot()
    var simulation: SimulationRoot { SimulationRoot(path: root.path) }

    /// A long-lived `groupsim cloud …` process, killed when the test ends.
    final class CloudChild {
        let process: RunningProcess
        init(_ arguments: [String], root: TemporaryRoot) throws {
            process = try RunningProcess(BuiltExecutable.path("groupsim"), ["cloud"] + arguments + ["--root", root.path])
        }
        deinit { process.kill() }

        /// The next line whose "event" is `event` (the lines are JSON objects).
        @discardableResult
        func waitFor(_ event: String, where extra: (String) -> Bool = { _ in true }, timeout: TimeInterval = 20) throws -> String {
            try process.waitForLine(timeout: timeout) { $0.contains("\"event\":\"\(event)\"") && extra($0) }
        }

        func killHard() throws {
            guard process.kill() != nil else { throw RunningProcess.Timeout(description: "the cloud process did not end within 10 s of SIGKILL") }
        }
    }

    func startCloud() throws -> CloudChild {
        let server = try CloudChild(["serve"], root: root)
        try server.waitFor("listening")
        return server
    }

    func location() throws -> ServerLocation {
        guard let location = try ServerLocation.read(root: simulation) else { throw TestFailure("no server.plist after the cloud said it listens") }
        return location
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    func cloudStore(_ store: String, account: String) throws -> [String: PlistValue] {
        let location = try location()
        return try CloudClient.blocking {
            try await CloudClient.request(location, path: "/v1/accounts/\(account)/stores/\(store)")
        }.dictionaryValue?["records"]?.dictionaryValue ?? [:]
    }

    @Test func everyAcknowledgedChangeSurvivesKillingTheCloud() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        var server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("ready")
        let count = 20
        for index in 0..<count {
            let result = try groupsim(["cloud", "write", "com.example.kvs", "k\(index)", "\(index)"], root: root)
            #expect(result.status == 0, "\(result.stderr)")
        }
        // The agent says which sequences the cloud acknowledged; wait until all have been.
        var acknowledged = Set<Int64>()
        while acknowledged.count < count {
            let line = try agent.waitFor("acknowledged")
            let fields = try PlistJSON.decode(PlistJSON.parse(line)).dictionaryValue ?? [:]
            for case .integer(let sequence) in fields["sequences"]?.arrayValue ?? [] { acknowledged.insert(sequence) }
        }
        try server.killHard()
        server = try startCloud()
        let records = try cloudStore("com.example.kvs", account: "alice")
        for index in 0..<count {
            #expect(records["k\(index)"]?.dictionaryValue?["value"] == .integer(Int64(index)), "k\(index) was acknowledged, then lost")
        }
        // The agent finds the restarted cloud (same port) and goes on.
        #expect(try groupsim(["cloud", "write", "com.example.kvs", "after", "true"], root: root).status == 0)
        try agent.waitFor("acknowledged")
        #expect(try cloudStore("com.example.kvs", account: "alice")["after"]?.dictionaryValue?["value"] == .bool(true))
        withExtendedLifetime(server) {}
    }

    @Test func killingTheAgentLosesNoWrite() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try startCloud()
        var agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected")
        let rounds = 3, perRound = 10
        for round in 0..<rounds {
            for index in 0..<perRound {
                let key = round * perRound + index
                #expect(try groupsim(["cloud", "write", "com.example.kvs", "k\(key)", "\(key)"], root: root).status == 0)
            }
            // Killed wherever it is: mid-upload, between an upload and its
            // acknowledgement, between recording an acknowledgement and
            // printing it, or idle.
            try agent.killHard()
            agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
            try agent.waitFor("connected")
        }
        // The last agent uploads whatever its predecessors left pending. What
        // is done is read from the device's copy, not from the lines printed:
        // a killed agent may have recorded an acknowledgement it never printed.
        let device = DeviceCloud(root: simulation, device: "iPhone")
        while try device.readStore("com.example.kvs")?.pending.isEmpty != true {
            try agent.waitFor("acknowledged")
        }
        let records = try cloudStore("com.example.kvs", account: "alice")
        for key in 0..<(rounds * perRound) {
            #expect(records["k\(key)"]?.dictionaryValue?["value"] == .integer(Int64(key)), "k\(key) was written on the device and never reached the cloud")
        }
        withExtendedLifetime(server) {}
    }

    @Test func anAgentWhoseDeviceIsErasedSyncsAgainOnceItIsSignedIn() throws {
        #expect(try groupsim(["device", "create", "iPhone"], root: root).status == 0)
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected")
        // Erased under its running agent: the account goes with the device's
        // settings, and the agent must see the settings come back in a new folder.
        let erase = try groupsim(["device", "erase", "iPhone"], root: root)
        #expect(erase.status == 0, "\(erase.stderr)")
        try agent.waitFor("disconnected")
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        #expect(try groupsim(["cloud", "write", "com.example.kvs", "after", "2"], root: root).status == 0)
        try agent.waitFor("connected")
        try agent.waitFor("acknowledged")
        let records = try cloudStore("com.example.kvs", account: "alice")
        #expect(records["after"]?.dictionaryValue?["value"] == .integer(2))
        withExtendedLifetime(server) {}
    }

    @Test func aLostFirstDownloadIsAskedForAgain() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try startCloud()
        // The cloud drops the next push to the device: the reply to the agent's hello, the first download of an empty store.
        #expect(try groupsim(["cloud", "network", "drop-pushes", "1"], root: root).status == 0)
        let watch = try CloudChild(["watch", "com.example.kvs"], root: root)
        try watch.waitFor("ready")
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected")
        // An app learns that its first sync is over only from InitialSyncChange.
        try watch.waitFor("external-change", where: { $0.contains("initial-sync-change") })
        withExtendedLifetime((server, agent)) {}
    }

    @Test func startRunsTheCloudAndAgentsInTheBackgroundAndStopEndsThem() throws {
        #expect(try groupsim(["device", "create", "iPhone"], root: root).status == 0)
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        // Bounded: a daemon that kept a descriptor of its starter's (a pipe, the
        // socket by which Foundation learns a child exited) would hold this up.
        let started = try groupsimBounded(["cloud", "start"], root: root, timeout: 30)
        #expect(started.status == 0 && started.stdout.contains("iPhone's agent"), "\(started.stdout)\(started.stderr)")
        let running = try groupsimBounded(["cloud", "status"], root: root)
        #expect(running.stdout.contains("agent running"), "\(running.stdout)")
        let stopped = try groupsimBounded(["cloud", "stop"], root: root, timeout: 30)
        #expect(stopped.status == 0 && stopped.stdout.contains("ended cloud"), "\(stopped.stdout)\(stopped.stderr)")
        #expect(try groupsimBounded(["cloud", "status"], root: root).stdout.contains("agent not running"))
    }

    /// A device refused by `cloud start` (a name that could leave the root,
    /// a device that does not exist) starts nothing: no cloud is left running.
    @Test func startChecksEveryDeviceBeforeStartingAnything() throws {
        #expect(try groupsim(["device", "create", "iPhone"], root: root).status == 0)
        let daemons = CloudDaemons(root: simulation, groupsim: "")
        defer { daemons.stop() }
        for (device, problem) in [("../x", "contains '/'"), ("iPhonee", "no device named iPhonee")] {
            let refused = try groupsimBounded(["cloud", "start", "--device", "iPhone", "--device", device], root: root, timeout: 30)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains(problem), "\(refused.stderr)")
            #expect(daemons.server == nil, "a cloud was left running after refusing \(device)")
            #expect(daemons.agent("iPhone") == nil)
            #expect(daemons.agent("iPhonee") == nil)
        }
    }

    @Test func hostileMessagesGetAnErrorAndTheCloudKeepsServing() throws {
        let server = try startCloud()
        let location = try location()
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
        let replies = try CloudClient.blocking { try await RawSyncClient.exchange(location, send: frames, replies: frames.count) }
        #expect(replies.count == frames.count, "\(replies)")
        for (frame, reply) in zip(frames, replies) {
            #expect(reply.contains("\"type\":\"error\""), "\(frame.prefix(60)) → \(reply.prefix(200))")
        }
        #expect(replies.joined().contains("the first message of a connection must be hello"))
        #expect(replies.joined().contains("device name"))
        // A well-formed hello on a new connection still works.
        let hello = #"{"type":"hello","device":"iPhone","account":"alice","stores":{"s":0}}"#
        let answer = try CloudClient.blocking { try await RawSyncClient.exchange(location, send: [hello], replies: 2) }
        #expect(answer.first?.contains("\"type\":\"welcome\"") == true, "\(answer)")
        #expect(answer.last?.contains("\"initial\":true") == true, "\(answer)")
        // The HTTP face answers bad requests with a reason and keeps serving.
        let badFault = Result { try CloudClient.blocking { try await CloudClient.request(location, path: "/v1/faults/iPhone", body: ["latencyMs": -5]) } }
        #expect("\(badFault)".contains("latencyMs"), "\(badFault)")
        let unknown = Result { try CloudClient.blocking { try await CloudClient.request(location, path: "/v1/nothing") } }
        #expect("\(unknown)".contains("404"), "\(unknown)")
        let status = try CloudClient.blocking { try await CloudClient.request(location, path: "/v1/status") }
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
        #expect(settings.stderr.contains(folder + "/device.plist") && settings.stderr.contains("account must be a non-empty string"), "\(settings.stderr)")
        // A store copy of the wrong shape: writes are refused naming the file and field; the file is left as it was.
        let store = folder + "/stores/com.example.other.plist"
        let malformed = BinaryPropertyList.encode(.dictionary(["values": .string("not a dictionary")]))
        try Data(malformed).write(to: URL(fileURLWithPath: store))
        let write = try groupsim(["cloud", "write", "com.example.other", "k", "1"], root: root)
        #expect(write.status != 0)
        #expect(write.stderr.contains(store) && write.stderr.contains("values must be an object"), "\(write.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == Data(malformed))
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

    @Test func aStoppedCloudMakesRequestsFailInsteadOfHanging() throws {
        let server = try startCloud()
        let location = try location()
        server.process.signal(SIGSTOP)
        defer { server.process.signal(SIGCONT) }
        let outcome = Result { try CloudClient.blocking { try await CloudClient.request(location, path: "/v1/status", timeout: .seconds(1)) } }
        #expect("\(outcome)".contains("did not answer /v1/status within"), "\(outcome)")
    }

    /// The repository's folder of cloud scenarios (the tests run from the package root).
    static let scenarios = FileManager.default.currentDirectoryPath + "/scenarios/cloud"

    /// Runs one of the repository's cloud scenarios (real apps, cloud and agents) and expects it to pass.
    func expectScenarioPasses(_ name: String) throws {
        let tmp = root.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let result = try runBounded(BuiltExecutable.path("groupsim"), ["run", Self.scenarios + "/\(name).yaml"],
                                    environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 180)
        #expect(result.status == 0 && result.stdout.contains("scenarios: 1 passed, 0 failed"), "\(result.stdout)\(result.stderr)")
    }

    /// A store copy keeps its last 32 notices. An app stopped while more
    /// arrive is told of every key that changed once it runs again, and its
    /// bridge copies every one into the app-group suite.
    @Test func aSuspendedAppIsToldOfEveryKeyThatArrivedMeanwhile() throws {
        for device in ["iPhone", "iPad"] {
            #expect(try groupsim(["cloud", "account", "sign-in", "alice", "--device", device], root: root).status == 0)
        }
        let server = try startCloud()
        let phoneAgent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        let padAgent = try CloudChild(["agent", "--device", "iPad"], root: root)
        let app = try AppProcess("main-app", root: root, manifest: Self.scenarios + "/apps/synced-notes.yaml", device: "iPhone",
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
        let app = try AppProcess("main-app", root: root, manifest: Self.scenarios + "/apps/synced-notes.yaml", device: "iPhone",
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
