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
@Suite(.serialized) struct CloudProcessTests: CloudProcessSuite {
    let root = TemporaryRoot()

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
        else { throw CloudTestFailure("no record of pad in the cloud") }
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
        guard case .integer(let revision)? = ack["revision"] else { throw CloudTestFailure("no revision in \(replies.last?.prefix(300) ?? "")") }
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
}
