import CloudClient
import CloudDevice
import CloudModel
import CloudService
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

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
        /// `groupsim` run by a shell script (`$0` is groupsim, `$1` the root): to start it with other limits.
        init(root: TemporaryRoot, shell script: String) throws {
            process = try RunningProcess("/bin/sh", ["-c", script, BuiltExecutable.path("groupsim"), root.path])
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

    /// The cloud's address with the root's control secret, as the CLI asks it.
    func endpoint() throws -> CloudEndpoint {
        guard let endpoint = try CloudEndpoint.control(root: simulation) else { throw TestFailure("no server.plist after the cloud said it listens") }
        return endpoint
    }

    /// A device's secret (made now if the device has none), as its agent shows it.
    func secret(of device: String) throws -> String {
        try DeviceCloud(root: simulation, device: device).secretFile().readOrCreate()
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The store's records in the cloud; none before its first upload (the cloud answers 404 then).
    func cloudStore(_ store: String, account: String) throws -> [String: PlistValue] {
        let endpoint = try endpoint()
        do {
            return try CloudClient.blocking {
                try await CloudClient.request(endpoint, path: "/v1/accounts/\(account)/stores/\(store)")
            }.dictionaryValue?["records"]?.dictionaryValue ?? [:]
        } catch let failure as CloudClient.Failure where failure.status == 404 {
            return [:]
        }
    }

    /// Reads `child`'s lines until `condition` holds: it is checked first,
    /// then after each line (a line is what says the state may have moved).
    func until(_ child: CloudChild, timeout: TimeInterval = 20, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            try child.process.waitForLine(timeout: max(0.1, deadline.timeIntervalSinceNow)) { _ in true }
        }
    }

    func deviceValue(_ key: String, store: String = "com.example.kvs", device: String) throws -> PlistValue? {
        try DeviceCloud(root: simulation, device: device).readStore(store)?.values[key]
    }

    func cloudValue(_ key: String, store: String = "com.example.kvs") throws -> PlistValue? {
        try cloudStore(store, account: "alice")[key]?.dictionaryValue?["value"]
    }

    func write(_ key: String, _ value: String, device: String) throws {
        let result = try groupsim(["cloud", "write", "com.example.kvs", key, value, "--device", device], root: root)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// iPhone and iPad signed in to alice, each with its agent, both
    /// holding k1 (written on iPhone) and the store open.
    func twoDevicesHoldingK1() throws -> (server: CloudChild, phone: CloudChild, pad: CloudChild) {
        #expect(try groupsim(["device", "create", "iPad"], root: root).status == 0)
        for device in ["iPhone", "iPad"] {
            #expect(try groupsim(["cloud", "account", "sign-in", "alice", "--device", device], root: root).status == 0)
        }
        let server = try startCloud()
        let phone = try CloudChild(["agent", "--device", "iPhone"], root: root)
        let pad = try CloudChild(["agent", "--device", "iPad"], root: root)
        try write("pad", "0", device: "iPad")
        try write("k1", "1", device: "iPhone")
        try until(pad) { try deviceValue("k1", device: "iPad") == .integer(1) }
        try until(phone) { try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs")?.pending.isEmpty == true }
        return (server, phone, pad)
    }

    /// The cloud's data folder deleted while it is stopped: its revisions
    /// start again from 0. The devices see that the cloud no longer has their
    /// history, take its (empty) store, and give back what they hold; new
    /// writes reach the other device again (before, every device ignored
    /// every new revision up to the one it had, for ever).
    @Test func aCloudWhoseDataIsDeletedIsFilledAgainByItsDevices() throws {
        var (server, phone, pad) = try twoDevicesHoldingK1()
        try server.killHard()
        try FileManager.default.removeItem(atPath: ServerLocation.dataFolder(root: simulation))
        server = try startCloud()
        try phone.waitFor("cloud-reset")
        try pad.waitFor("cloud-reset")
        try until(server) { try cloudValue("k1") == .integer(1) && cloudValue("pad") == .integer(0) }
        try write("k2", "2", device: "iPhone")
        try until(pad) { try deviceValue("k2", device: "iPad") == .integer(2) }
        #expect(try deviceValue("k1", device: "iPad") == .integer(1))
        withExtendedLifetime(server) {}
    }

    /// The cloud's data restored from a copy taken before k2 was written:
    /// the devices had revisions the restored cloud never wrote; they reset,
    /// and k2, acknowledged before, is given back.
    @Test func aCloudRestoredFromAnOlderCopyGetsBackWhatCameAfter() throws {
        var (server, phone, pad) = try twoDevicesHoldingK1()
        let data = ServerLocation.dataFolder(root: simulation)
        let backup = root.path + "/data-backup"
        try FileManager.default.copyItem(atPath: data, toPath: backup)
        try write("k2", "2", device: "iPhone")
        try until(pad) { try deviceValue("k2", device: "iPad") == .integer(2) }
        try server.killHard()
        try FileManager.default.removeItem(atPath: data)
        try FileManager.default.moveItem(atPath: backup, toPath: data)
        server = try startCloud()
        try until(server) { try cloudValue("k2") == .integer(2) }
        #expect(try cloudValue("k1") == .integer(1))
        try write("k3", "3", device: "iPad")
        try until(phone) { try deviceValue("k3", device: "iPhone") == .integer(3) }
        withExtendedLifetime((server, pad)) {}
    }

    /// A damaged store file at start: the cloud moves it aside, says so in
    /// its log, and the device fills the store again (before, the account
    /// was refused for ever, and the log said nothing).
    @Test func aDamagedFileOfTheCloudIsSetAsideLoggedAndFilledAgain() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        var server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try write("k1", "1", device: "iPhone")
        try until(agent) { try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs")?.pending.isEmpty == true }
        try server.killHard()
        let data = ServerLocation.dataFolder(root: simulation)
        let files =
            FileManager.default.enumerator(atPath: data)?.compactMap { $0 as? String }.filter {
                $0.hasSuffix(".plist") && !($0 as NSString).lastPathComponent.hasPrefix(".")
            } ?? []
        #expect(!files.isEmpty)
        for file in files { try Data("damaged".utf8).write(to: URL(fileURLWithPath: data + "/" + file)) }
        server = try startCloud()
        let report = try server.waitFor("damaged")
        #expect(report.contains("moved aside"), "\(report)")
        try until(server) { try cloudValue("k1") == .integer(1) }
        let aside = FileManager.default.enumerator(atPath: data)?.compactMap { $0 as? String }.filter { $0.contains(".corrupt-") } ?? []
        #expect(aside.count == files.count, "\(aside)")
        withExtendedLifetime(agent) {}
    }

    /// iPad signed in to alice with its agent, its key `pad` (0) in the cloud.
    func padHoldingItsOwnKey() throws -> (server: CloudChild, pad: CloudChild) {
        #expect(try groupsim(["device", "create", "iPad"], root: root).status == 0)
        #expect(try groupsim(["cloud", "account", "sign-in", "alice", "--device", "iPad"], root: root).status == 0)
        let server = try startCloud()
        let pad = try CloudChild(["agent", "--device", "iPad"], root: root)
        try write("pad", "0", device: "iPad")
        try until(pad) { try cloudValue("pad") == .integer(0) }
        return (server, pad)
    }

    /// Two writes with one stamp and two values (a device restored from a
    /// backup reusing a sequence number in the same millisecond): the cloud
    /// keeps the greater value whatever the order, an ack never claims the
    /// lower one was kept, and the other device ends with the same value.
    @Test func twoValuesWithOneStampEndTheSameEverywhere() throws {
        let (server, pad) = try padHoldingItsOwnKey()
        let location = try location()
        let secret = try secret(of: "iPhone")
        let hello = #"{"type":"hello","device":"iPhone","account":"alice","stores":{}}"#
        func upload(_ value: String) throws -> String {
            let frame =
                #"{"type":"upload","store":"com.example.kvs","changes":[{"key":"k","value":"\#(value)","time":1000,"device":"iPhone","sequence":1}]}"#
            let replies = try CloudClient.blocking {
                try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [hello, frame], replies: 2)
            }
            return replies.last ?? ""
        }
        _ = try upload("banana")
        let lower = try upload("apple")
        #expect(lower.contains("\"type\":\"ack\"") && lower.contains("\"superseded\":[{") && lower.contains("banana"), "\(lower)")
        #expect(try cloudValue("k") == .string("banana"))
        try until(pad) { try deviceValue("k", device: "iPad") == .string("banana") }
        // The other order: the lower value first, then the greater replaces it.
        _ = try upload("apple")
        #expect(try cloudValue("k") == .string("banana"))
        let frame = #"{"type":"upload","store":"com.example.kvs","changes":[{"key":"j","value":"apple","time":1000,"device":"iPhone","sequence":2}]}"#
        let second =
            #"{"type":"upload","store":"com.example.kvs","changes":[{"key":"j","value":"banana","time":1000,"device":"iPhone","sequence":2}]}"#
        let replies = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [hello, frame, second], replies: 3)
        }
        #expect(replies.last?.contains("\"superseded\":[]") == true, "\(replies)")
        #expect(try cloudValue("j") == .string("banana"))
        try until(pad) { try deviceValue("j", device: "iPad") == .string("banana") }
        withExtendedLifetime(server) {}
    }

    /// A signed-in device (its own secret, a raw connection) that gives back
    /// "what it holds" when no reset was announced to it is refused; after
    /// asking for the whole store it may give back, but not rewrite another
    /// device's key under that device's exact stamp, nor remove it as if
    /// that device had: the cloud keeps its record, and the other device's
    /// copy keeps its value.
    @Test func aRestoreIsTakenOnlyAfterAResetAndNeverRewritesAnotherDevicesKey() throws {
        let (server, pad) = try padHoldingItsOwnKey()
        guard let record = try cloudStore("com.example.kvs", account: "alice")["pad"]?.dictionaryValue,
            case .integer(let time)? = record["time"], case .integer(let sequence)? = record["sequence"]
        else { throw TestFailure("no record of pad in the cloud") }
        let location = try location()
        let secret = try secret(of: "iPhone")
        let hello = #"{"type":"hello","device":"iPhone","account":"alice","stores":{}}"#
        let forged =
            #"{"type":"restore","store":"com.example.kvs","records":[{"key":"pad","value":9,"time":\#(time),"device":"iPad","sequence":\#(sequence)},"#
            + #"{"key":"other","time":\#(time + 5_000),"device":"iPad","sequence":\#(sequence + 1)}]}"#
        let unannounced = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [hello, forged], replies: 2)
        }
        #expect(unannounced.last?.contains("\"type\":\"restored\"") == true && unannounced.last?.contains("only after") == true, "\(unannounced)")
        let subscribe = #"{"type":"subscribe","store":"com.example.kvs","since":0}"#
        let afterReset = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [hello, subscribe, forged], replies: 3)
        }
        #expect(afterReset.last?.contains("\"type\":\"restored\"") == true, "\(afterReset)")
        #expect(try cloudValue("pad") == .integer(0))
        #expect(try deviceValue("pad", device: "iPad") == .integer(0))
        withExtendedLifetime(server) {}
    }

    /// 25,000 removals in one upload are stored and acknowledged within the
    /// usual wait (they took 42 s when each removal re-read the whole store).
    @Test func manyRemovalsInOneUploadAreAcknowledgedPromptly() throws {
        let server = try startCloud()
        let location = try location()
        let secret = try secret(of: "iPhone")
        let hello = #"{"type":"hello","device":"iPhone","account":"alice","stores":{}}"#
        let changes = (0..<25_000).map { #"{"key":"k\#($0)","time":\#(1000 + $0),"device":"iPhone","sequence":\#($0 + 1)}"# }
        let upload = #"{"type":"upload","store":"s","changes":["# + changes.joined(separator: ",") + "]}"
        let replies = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "iPhone", secret: secret, send: [hello, upload], replies: 2, timeout: .seconds(20))
        }
        #expect(
            replies.last?.contains("\"type\":\"ack\"") == true && replies.last?.contains("\"sequence\"") == false,
            "\(replies.last?.prefix(300) ?? "no ack")")
        let records = try cloudStore("s", account: "alice")
        #expect(records.count <= 4096, "\(records.count) removals kept")
        withExtendedLifetime(server) {}
    }

    /// Removals are kept up to a bound. A device offline while the removal
    /// of a key it holds is forgotten takes the whole store when it comes
    /// back, gives the key back, and the key stays removed: the give-back is
    /// older than the newest forgotten removal.
    @Test func aRemovalForgottenWhileADeviceWasOfflineStillRemovesTheKeyThere() throws {
        let (server, phone, pad) = try twoDevicesHoldingK1()
        #expect(try groupsim(["cloud", "network", "--device", "iPad", "offline"], root: root).status == 0)
        try pad.waitFor("disconnected")
        #expect(try groupsim(["cloud", "write", "com.example.kvs", "k1", "--remove", "--device", "iPhone"], root: root).status == 0)
        try until(phone) { try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs")?.pending.isEmpty == true }
        // 5,000 later removals by another device push k1's out of what the store keeps.
        let hello = #"{"type":"hello","device":"Mac","account":"alice","stores":{}}"#
        // Stamped a minute ahead: later than k1's removal, and within the skew the cloud accepts.
        let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        let removals = (0..<5_000).map { #"{"key":"x\#($0)","time":\#(later + Int64($0)),"device":"Mac","sequence":\#($0 + 1)}"# }
        let upload = #"{"type":"upload","store":"com.example.kvs","changes":["# + removals.joined(separator: ",") + "]}"
        let location = try location()
        let secret = try secret(of: "Mac")
        let replies = try CloudClient.blocking {
            try await RawSyncClient.exchange(location, device: "Mac", secret: secret, send: [hello, upload], replies: 2, timeout: .seconds(20))
        }
        #expect(
            replies.last?.contains("\"type\":\"ack\"") == true && replies.last?.contains("\"refused\":[]") == true,
            "\(replies.last?.prefix(300) ?? "no ack")")
        #expect(try cloudStore("com.example.kvs", account: "alice")["k1"] == nil, "k1's removal is still kept")
        // iPhone, online, had every removal pushed to it: no reset there.
        let ack = try PlistJSON.decode(PlistJSON.parse(replies.last ?? "{}")).dictionaryValue ?? [:]
        guard case .integer(let revision)? = ack["revision"] else { throw TestFailure("no revision in \(replies.last?.prefix(300) ?? "")") }
        try until(phone) { (try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs")?.revision ?? 0) >= revision }
        #expect(!phone.process.allLines.contains { $0.contains("cloud-reset") || $0.contains("history-lost") }, "\(phone.process.allLines)")
        #expect(try deviceValue("k1", device: "iPad") == .integer(1))
        #expect(try groupsim(["cloud", "network", "--device", "iPad", "online"], root: root).status == 0)
        try pad.waitFor("cloud-reset")
        // iPad gave k1 back; the cloud answered with the forgotten removal, which iPad took.
        let restored = try pad.waitFor("restored")
        #expect(restored.contains(#""superseded":["k1"]"#), "\(restored)")
        #expect(try deviceValue("k1", device: "iPad") == nil)
        #expect(try cloudValue("k1") == nil)
        #expect(try deviceValue("pad", device: "iPad") == .integer(0) && cloudValue("pad") == .integer(0))
        withExtendedLifetime(server) {}
    }

    /// One account's work never holds up another's: while bob's store file
    /// is locked by another process (the cloud waits for the lock, up to its
    /// limit), the cloud answers requests and stores alice's upload.
    @Test func oneAccountWaitingForItsFileHoldsUpNoOtherAccount() throws {
        let server = try startCloud()
        let location = try location()
        let bobsSecret = try secret(of: "bobsPhone")
        let alicesSecret = try secret(of: "alicesPhone")
        let endpoint = try endpoint()
        @Sendable func frames(_ account: String, _ device: String, key: String, sequence: Int) -> [String] {
            [
                #"{"type":"hello","device":"\#(device)","account":"\#(account)","stores":{}}"#,
                #"{"type":"upload","store":"s","changes":[{"key":"\#(key)","value":1,"time":1000,"device":"\#(device)","sequence":\#(sequence)}]}"#,
            ]
        }
        _ = try CloudClient.blocking {
            try await RawSyncClient.exchange(
                location, device: "bobsPhone", secret: bobsSecret, send: frames("bob", "bobsPhone", key: "k0", sequence: 1), replies: 2)
        }
        let lockPath = ServerLocation.dataFolder(root: simulation) + "/accounts/bob/.s.plist.lock"
        let lock = open(lockPath, O_RDWR)
        #expect(lock >= 0 && flock(lock, LOCK_EX) == 0, "\(lockPath)")
        var locked = true
        defer { if locked { close(lock) } }
        let bob = UnsafeSendableBox<[String]?>(nil)
        let bobDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let replies = try? CloudClient.blocking {
                try await RawSyncClient.exchange(
                    location, device: "bobsPhone", secret: bobsSecret, send: frames("bob", "bobsPhone", key: "k1", sequence: 2), replies: 2,
                    timeout: .seconds(30))
            }
            bob.update { $0 = replies }
            bobDone.signal()
        }
        // The cloud has bob's upload in hand once its counter says so; it answers while it waits for the file.
        var uploaded: Int64 = 0
        while uploaded < 2 {
            let status = try CloudClient.blocking { try await CloudClient.request(endpoint, path: "/v1/status", timeout: .seconds(5)) }
            if case .integer(let count)? = status.dictionaryValue?["traffic"]?.dictionaryValue?["bobsPhone"]?.dictionaryValue?["uploadedChanges"] {
                uploaded = count
            }
        }
        let alice = try CloudClient.blocking {
            try await RawSyncClient.exchange(
                location, device: "alicesPhone", secret: alicesSecret, send: frames("alice", "alicesPhone", key: "k", sequence: 1), replies: 2,
                timeout: .seconds(5))
        }
        #expect(alice.last?.contains("\"accepted\":[1]") == true, "\(alice)")
        #expect(bobDone.wait(timeout: .now()) == .timedOut, "bob's upload finished while its file was locked")
        close(lock)
        locked = false
        bobDone.wait()
        #expect(bob.value?.last?.contains("\"accepted\":[2]") == true, "\(String(describing: bob.value))")
        withExtendedLifetime(server) {}
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
        let rounds = 3
        let perRound = 10
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
            #expect(
                records["k\(key)"]?.dictionaryValue?["value"] == .integer(Int64(key)), "k\(key) was written on the device and never reached the cloud"
            )
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

    /// iPhone signed in to alice with its agent, gone offline, and a write
    /// (`offline` = 1) made there since, waiting on the device.
    func signedInWithAWriteMadeOffline() throws -> (server: CloudChild, agent: CloudChild) {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected")
        #expect(try groupsim(["cloud", "network", "--device", "iPhone", "offline"], root: root).status == 0)
        try agent.waitFor("disconnected")
        try write("offline", "1", device: "iPhone")
        return (server, agent)
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
            throw TestFailure("the cloud's record of k1 has no time")
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
            throw TestFailure("\(error)\niPhone's agent:\n\(tail(phone))\niPad's agent:\n\(tail(pad))\ncloud:\n\(tail(server))")
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

    /// The repository's folder of cloud scenarios (the tests run from the package root).
    static let scenarios = FileManager.default.currentDirectoryPath + "/scenarios/cloud"

    /// Runs one of the repository's cloud scenarios (real apps, cloud and agents) and expects it to pass.
    func expectScenarioPasses(_ name: String) throws {
        let tmp = root.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let result = try runBounded(
            BuiltExecutable.path("groupsim"), ["run", Self.scenarios + "/\(name).yaml"],
            environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 180)
        #expect(result.status == 0 && result.stdout.contains("scenarios: 1 passed, 0 failed"), "\(result.stdout)\(result.stderr)")
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
