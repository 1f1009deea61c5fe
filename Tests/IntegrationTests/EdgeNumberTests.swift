import CloudDevice
import CloudService
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// Numbers at their edges, from the command line, from files and from a
/// scenario, against the real executables: each is a clear error or is
/// handled, never a trap. A file holding a number no writer can have made is
/// kept aside like a corrupt one, and the device syncs again.
@Suite(.serialized) struct EdgeNumberTests {
    let root = TemporaryRoot()
    var simulation: SimulationRoot { SimulationRoot(path: root.path) }

    func startCloud() throws -> CloudChild {
        let server = try CloudChild(["serve"], root: root)
        try server.waitFor("listening")
        return server
    }

    /// A key of the cloud's copy of a store, as `groupsim cloud read` prints it (JSON).
    func cloudValue(_ store: String, account: String, key: String) throws -> String {
        try groupsim(["cloud", "read", "--account", account, store, key], root: root).trimmedOutput
    }

    /// Rewrites a plist file of the device through `change`, as a hand or another tool would.
    func edit(_ path: String, _ change: (inout [String: PlistValue]) -> Void) throws {
        var fields = try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: path)))
        change(&fields)
        try Data(BinaryPropertyList.encode(.dictionary(fields))).write(to: URL(fileURLWithPath: path))
    }

    func keptAside(_ path: String) throws -> [String] {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(name + ".corrupt-") }
    }

    @Test func aClockSkewAtEitherEndIsRefusedWithItsRange() throws {
        for extreme in ["-9223372036854775808", "9223372036854775807"] {
            let result = try groupsim(["cloud", "network", "skew", "--", extreme], root: root)
            #expect(result.status == 64, "\(extreme): \(result.stderr)")
            #expect(result.stderr.contains("skew takes a number from -315360000000 to 315360000000 ms"), "\(result.stderr)")
        }
        // A negative number is a number, not an unknown option, with or without --.
        let latency = try groupsim(["cloud", "network", "latency", "-5"], root: root)
        #expect(latency.status == 64 && latency.stderr.contains("latency takes a number from 0 to 600000 ms, found -5"), "\(latency.stderr)")
        #expect(!latency.stderr.contains("Unknown option"), "\(latency.stderr)")
        let behind = try groupsim(["cloud", "network", "skew", "-3600000"], root: root)
        #expect(behind.status == 0, "\(behind.stderr)")
        #expect(try groupsim(["cloud", "status"], root: root).stdout.contains("clock skew -3600000 ms"))
    }

    /// A clock skew no device can have is ignored and said (file, field, value), never a reason to set the
    /// whole file aside: the file holds the account, and a device that lost it signed out and dropped its
    /// offline writes.
    @Test func aDeviceFileWithAnImpossibleClockSkewIsIgnoredAndTheWriteHappens() throws {
        #expect(try groupsim(["cloud", "network", "skew", "1000"], root: root).status == 0)
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let settings = root.path + "/devices/iPhone/cloud/device.plist"
        try edit(settings) { $0["clockSkewMilliseconds"] = .integer(.max) }
        // Shown where it is, with what is used instead; the rest of the status still is.
        let shown = try groupsim(["cloud", "status"], root: root)
        #expect(
            shown.status == 0 && shown.stdout.contains("iPhone  account alice") && shown.stdout.contains("clock skew 0 ms")
                && shown.stdout.contains("ignored: \(settings): clockSkewMilliseconds is 9223372036854775807"),
            "\(shown.stdout)\(shown.stderr)")
        // Stamping a write with it would overflow: the write takes no skew, and says why.
        let write = try groupsim(["cloud", "write", "com.example.kvs", "k", "1"], root: root)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(write.stderr.contains("clockSkewMilliseconds is 9223372036854775807"), "\(write.stderr)")
        #expect(try keptAside(settings).isEmpty)
        #expect(try DeviceCloud(root: simulation, device: "iPhone").readSettings().account == "alice")
        let copy = try #require(try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs"))
        #expect(copy.values["k"] == .integer(1))
        #expect(try #require(copy.pending["k"]).stamp.time <= DeviceCloudSettings.realTime())
    }

    @Test func aCopyWithCountersAtInt64MaxIsKeptAsideAndTheRestartedAgentSyncs() throws {
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        #expect(try groupsim(["cloud", "write", "com.example.kvs", "before", "1"], root: root).status == 0)
        let copy = root.path + "/devices/iPhone/cloud/stores/com.example.kvs.plist"
        try edit(copy) { fields in
            fields["nextSequence"] = .integer(.max)
            fields["notices"] = .array([.dictionary(["serial": .integer(.max), "reason": .string("server-change"), "keys": .array([])])])
        }
        let server = try startCloud()
        // The copy made again has its first download from the cloud.
        let first = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try first.waitFor("connected")
        try first.waitFor("applied") { $0.contains("com.example.kvs") && $0.contains("\"initial\":true") }
        try first.killHard()
        #expect(try keptAside(copy).count == 1)
        // Restarted (a copy that crashed the agent crashed it on every restart), it syncs the device's writes.
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected")
        let write = try groupsim(["cloud", "write", "com.example.kvs", "after", "2"], root: root)
        #expect(write.status == 0, "\(write.stderr)")
        try agent.waitFor("acknowledged") { $0.contains("com.example.kvs") }
        #expect(try cloudValue("com.example.kvs", account: "alice", key: "after") == "2")
        let fresh = try #require(try DeviceCloud(root: simulation, device: "iPhone").readStore("com.example.kvs"))
        #expect(fresh.nextSequence < 10 && fresh.lastNoticeSerial < 10, "\(fresh)")
        withExtendedLifetime(server) {}
    }

    @Test func anAccountFileWithItsRevisionAtInt64MaxIsKeptAsideAndTheCloudServesOn() throws {
        let accounts = root.path + "/cloud/data/accounts"
        try FileManager.default.createDirectory(atPath: accounts, withIntermediateDirectories: true)
        let store: PlistValue = .dictionary(["revision": .integer(.max), "records": .dictionary([:])])
        try Data(BinaryPropertyList.encode(.dictionary(["com.example.kvs": store]))).write(to: URL(fileURLWithPath: accounts + "/alice.plist"))
        #expect(try groupsim(["cloud", "account", "sign-in", "alice"], root: root).status == 0)
        let server = try startCloud()
        let agent = try CloudChild(["agent", "--device", "iPhone"], root: root)
        try agent.waitFor("connected")
        #expect(try groupsim(["cloud", "write", "com.example.kvs", "k", "1"], root: root).status == 0)
        // An upload would have counted past Int64.max: the store is damaged, kept aside and named, and starts again.
        try server.waitFor("damaged") { $0.contains("must be a revision (from 0 to 9007199254740992), found 9223372036854775807") }
        try agent.waitFor("acknowledged") { $0.contains("com.example.kvs") }
        #expect(try cloudValue("com.example.kvs", account: "alice", key: "k") == "1")
        let status = try groupsim(["cloud", "status", "--json"], root: root)
        #expect(status.status == 0 && status.stdout.contains("\"server\""), "\(status.stdout)\(status.stderr)")
        withExtendedLifetime(server) {}
    }

    @Test func countsFromTheCommandLineAreCheckedBeforeAnythingRuns() throws {
        let scenario = root.path + "/one.yaml"
        try "summary: x\nprocesses: { app: { role: main-app } }\nsteps: [ { launch: app } ]\n".write(
            toFile: scenario, atomically: true, encoding: .utf8)
        let cases: [(tool: String, arguments: [String], message: String)] = [
            ("groupsim-bench", ["propagation", "--changes=-1"], "--changes must be from 1 to 1000000, found -1"),
            ("groupsim-bench", ["burst", "--sets=-9223372036854775808"], "--sets must be from 1 to 1000000, found -9223372036854775808"),
            ("groupsim-bench", ["start-to-ready", "--runs=-3"], "--runs must be from 1 to 10000, found -3"),
            ("groupsim-bench", ["foundation", "--keys=-1"], "--keys must be from 1 to 100000, found -1"),
            ("groupsim-bench", ["cloud", "--warmup=-1"], "--warmup must be from 0 to 1000000, found -1"),
            ("groupsim", ["run", "--repeat", "9223372036854775807", scenario], "--repeat must be from 1 to 10000, found 9223372036854775807"),
        ]
        try expectUsageErrors(cases)
    }

    @Test func benchmarkChoicesThatDoNotExistAreRefusedBeforeAnythingRuns() throws {
        try expectUsageErrors([
            ("groupsim-bench", ["cloud", "--durability", "fast"], "--durability must be durable or process, found 'fast'"),
            (
                "groupsim-bench", ["foundation", "--only", "set-without-post", "--side", "foundation"],
                "--only set-without-post measures a part of the simulated side's set: use --side groupsim"
            ),
        ])
    }

    /// Each command ends with the usage status (64) and its message, having run nothing.
    private func expectUsageErrors(_ cases: [(tool: String, arguments: [String], message: String)]) throws {
        for (tool, arguments, message) in cases {
            let result = try runBounded(BuiltExecutable.path(tool), arguments, environment: ["GROUPSIM_ROOT": root.path], timeout: 60)
            #expect(result.status == 64, "\(tool) \(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(tool) \(arguments): \(result.stderr)")
        }
    }

    /// A seed is a name: a range past the largest seed is refused with the
    /// largest start that fits (it wrapped to seed 0 without a word).
    @Test func aSeedRangePastTheLargestSeedIsRefused() throws {
        let result = try groupsimBounded(["fuzz", "--seed", "18446744073709551615", "--runs", "2", "--length", "3", "--print"], root: root)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("start at most at 18446744073709551614"), "\(result.stderr)")
        let last = try groupsimBounded(["fuzz", "--seed", "18446744073709551615", "--runs", "1", "--length", "3", "--print"], root: root)
        #expect(last.status == 0 && last.stdout.contains("seed 18446744073709551615,"), "\(last.stdout)\(last.stderr)")
    }

    /// `--out` is made before anything runs (a failure must have somewhere to
    /// go), and removed again when nothing failed and it was made for this run.
    @Test func theFolderForFailuresIsNotLeftWhenNothingFails() throws {
        let out = root.path + "/failures"
        let result = try groupsimBounded(["fuzz", "--seed", "7", "--runs", "1", "--length", "2", "--out", out], root: root, timeout: 120)
        #expect(result.status == 0 && result.stdout.contains("fuzz: 1 passed, 0 failed"), "\(result.stdout)\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func anAheadMsAtInt64MinIsRefusedWhenTheScenarioIsRead() throws {
        let path = root.path + "/ahead.yaml"
        try """
        summary: x
        devices: [ { iPhone: { account: alice } } ]
        steps:
          - expect: [ { cloud: com.example.notes, account: alice, key: k, value: 1, ahead-ms: -9223372036854775808 } ]
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try groupsimBounded(["run", path], root: root, timeout: 60)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("ahead-ms: expected a whole number from -315360000000 to 315360000000"), "\(result.stderr)")
    }
}

/// A reader that goes away (`| head -1`) ends a command quietly: no trap, no
/// message, status 0, whichever executable was writing.
@Suite struct ClosedOutputTests {
    let root = TemporaryRoot()

    @Test func runEndsQuietlyWhenItsReaderIsGone() throws {
        let path = root.path + "/one.yaml"
        try "summary: x\nprocesses: { app: { role: main-app } }\nsteps: [ { launch: app }, { set: { in: app, key: k, value: 1 } } ]\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let result = try groupsimBounded(["run", path], root: root, timeout: 60, readerGone: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test func aRoleExecutableEndsQuietlyWhenItsReaderIsGone() throws {
        let result = try runBounded(
            BuiltExecutable.path("main-app"), ["--json"], environment: ["GROUPSIM_ROOT": root.path],
            stdin: Data("{\"id\":1,\"op\":\"ping\"}\n".utf8), readerGone: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"), "\(result.stderr)")
    }

    @Test func defaultsExportEndsQuietlyWhenItsReaderIsGone() throws {
        #expect(try groupsim(["defaults", "write", "group.com.example.notes", "k", "v"], root: root).status == 0)
        let result = try groupsimBounded(["defaults", "export", "group.com.example.notes", "-"], root: root, readerGone: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }
}
