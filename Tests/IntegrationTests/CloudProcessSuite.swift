import CloudClient
import CloudDevice
import CloudModel
import CloudService
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// What the cloud's process tests share: a long-lived `groupsim cloud …`
/// child, and helpers over a test's own root (its cloud, devices and stores).
/// The tests are in several serialized suites (`CloudProcessTests`,
/// `CloudFaultProcessTests`, `CloudTrustTests`), which run beside each other:
/// a test waits on the cloud and its agents far more than it computes.
protocol CloudProcessSuite {
    var root: TemporaryRoot { get }
}

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
        guard process.kill() != nil else { throw TestFailure("the cloud process did not end within 10 s of SIGKILL") }
    }
}

struct CloudTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension CloudProcessSuite {
    var simulation: SimulationRoot { SimulationRoot(path: root.path) }

    func startCloud() throws -> CloudChild {
        let server = try CloudChild(["serve"], root: root)
        try server.waitFor("listening")
        return server
    }

    func location() throws -> ServerLocation {
        guard let location = try ServerLocation.read(root: simulation) else {
            throw CloudTestFailure("no server.plist after the cloud said it listens")
        }
        return location
    }

    /// The cloud's address with the root's control secret, as the CLI asks it.
    func endpoint() throws -> CloudEndpoint {
        guard let endpoint = try CloudEndpoint.control(root: simulation) else {
            throw CloudTestFailure("no server.plist after the cloud said it listens")
        }
        return endpoint
    }

    /// A device's secret (made now if the device has none), as its agent shows it.
    func secret(of device: String) throws -> String {
        try DeviceCloud(root: simulation, device: device).secretFile().readOrCreate()
    }

    /// The store's records in the cloud; none before its first upload (the cloud answers 404 then).
    func cloudStore(_ store: String, account: String) throws -> [String: PlistValue] {
        let endpoint = try endpoint()
        do {
            return try CloudClient.blocking {
                try await CloudClient.request(endpoint, path: "/v1/accounts/\(account)/stores/\(store)")
            }.dictionaryValue?["records"]?.dictionaryValue ?? [:]
        } catch CloudClientError.at(_, .answered(status: 404, _)) {
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

    /// The store's revision in the cloud; 0 before its first upload.
    func cloudRevision(_ store: String = "com.example.kvs", account: String = "alice") throws -> Int64 {
        let endpoint = try endpoint()
        do {
            let found = try CloudClient.blocking {
                try await CloudClient.request(endpoint, path: "/v1/accounts/\(account)/stores/\(store)")
            }.dictionaryValue?["revision"]
            guard case .integer(let revision) = found else {
                throw CloudTestFailure("the cloud's store has no revision: \(String(describing: found))")
            }
            return revision
        } catch CloudClientError.at(_, .answered(status: 404, _)) {
            return 0
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
    /// holding k1 (written on iPhone) and the store open, each copy at the
    /// cloud's revision with nothing pending. (An ack can reach the
    /// writer before the push of the other device's earlier write: for that
    /// moment its copy has nothing pending and is still at revision 0, a
    /// copy with no history the cloud could lose.)
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
        for (device, agent) in [("iPad", pad), ("iPhone", phone)] {
            try until(agent) {
                let copy = try DeviceCloud(root: simulation, device: device).readStore("com.example.kvs")
                let cloud = try cloudRevision()
                return copy?.pending.isEmpty == true && copy?.revision == cloud
            }
        }
        #expect(try deviceValue("k1", device: "iPad") == .integer(1))
        return (server, phone, pad)
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

    /// Runs one of the repository's cloud scenarios (real apps, cloud and agents) and expects it to pass.
    func expectScenarioPasses(_ name: String) throws {
        let tmp = root.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let result = try runBounded(
            BuiltExecutable.path("groupsim"), ["run", Self.scenarios + "/\(name).yaml"],
            environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 180)
        #expect(result.status == 0 && result.stdout.contains("scenarios: 1 passed, 0 failed"), "\(result.stdout)\(result.stderr)")
    }

    /// The repository's folder of cloud scenarios (the tests run from the package root).
    static var scenarios: String { FileManager.default.currentDirectoryPath + "/scenarios/cloud" }
}
