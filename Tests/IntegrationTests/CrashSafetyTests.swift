import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// kill -9 at random instants of a tight write loop, hundreds of times, in
/// each durability: without fsync too, a killed process loses nothing it committed.
@Suite(.serialized) struct CrashSafetyTests {
    let group = "group.com.example.shared"

    @Test(arguments: Durability.allCases)
    func killedWritersNeverLeaveATornFileOrLoseAnAcknowledgedWrite(durability: Durability) throws {
        let root = TemporaryRoot()
        try root.setDurability(durability)
        let path = root.groupSuitePath(group)
        let kills = Int(ProcessInfo.processInfo.environment["GROUPSIM_KILL_ROUNDS"] ?? "") ?? 500
        var lastAcknowledged: Int64 = 0
        var corrupt = 0
        for round in 0..<kills {
            let writer = try RunningProcess(
                BuiltExecutable.path("groupsim-stress"),
                ["write-loop", "--domain", group, "--key", "n"],
                environment: ["GROUPSIM_ROOT": root.path])
            // Let it acknowledge a few writes, then kill it at a random point of the next ones.
            let acknowledgements = Int.random(in: 1...4)
            for _ in 0..<acknowledgements {
                let line = try writer.waitForLine { $0.hasPrefix("ack ") }
                // Each run restarts at 1; acknowledged values are per run.
                lastAcknowledged = Int64(line.dropFirst(4))!
            }
            usleep(UInt32.random(in: 0...1500))  // fault injection: where in the write the kill lands
            writer.signal(SIGKILL)
            try writer.waitForExit()
            // Any acks that arrived before the kill count too.
            for line in writer.allLines where line.hasPrefix("ack ") { lastAcknowledged = max(lastAcknowledged, Int64(line.dropFirst(4))!) }

            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let contents = try? PropertyListFormat.decodeDictionary(bytes) else {
                corrupt += 1
                Issue.record("round \(round): the file is torn or empty (\(bytes.count) bytes)")
                continue
            }
            let stored = try #require(contents["n"].flatMap { if case .integer(let i) = $0 { i } else { nil } })
            #expect(stored >= lastAcknowledged, "round \(round): acknowledged \(lastAcknowledged) but the file holds \(stored)")
            // The next run starts counting again: reset so its acks are compared fairly.
            let reset = try groupsim(["defaults", "write", group, "n", "-int", "0"], root: root)
            #expect(reset.status == 0, "round \(round): the reset failed: \(reset.stderr)")
            lastAcknowledged = 0
        }
        #expect(corrupt == 0)
        // Temporaries of killed writers are swept by the next writer.
        _ = try groupsim(["defaults", "write", group, "final", "yes"], root: root)
        let folder = (path as NSString).deletingLastPathComponent
        // Both kinds: a tool's `.NAME.tmp.PID` and a commit's `.NAME.tmp` (without fsync, in the scratch
        // folder; after an exchange, the old file).
        let scratch = folder + "/.groupsim-scratch"
        let leftovers = try
            (FileManager.default.contentsOfDirectory(atPath: folder)
            + ((try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? [])).filter { $0.contains(".tmp") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// Commits without fsync exchange the new file with the old one: a reader
    /// in another process, opening the file by name over and over meanwhile,
    /// always finds a whole file, never none.
    @Test func aReaderAlwaysFindsAWholeFileWhileAnotherProcessCommitsWithoutFsync() throws {
        let root = TemporaryRoot()
        try root.setDurability(.process)
        let path = root.groupSuitePath(group)
        let commits = 400
        let writer = try RunningProcess(
            BuiltExecutable.path("groupsim-stress"),
            ["write-loop", "--domain", group, "--key", "n", "--count", "\(commits)"],
            environment: ["GROUPSIM_ROOT": root.path])
        _ = try writer.waitForLine { $0 == "ack 1" }
        var reads = 0
        var highest: Int64 = 0
        while writer.isRunning || reads == 0 {
            reads += 1
            let bytes = try #require(try? Data(contentsOf: URL(fileURLWithPath: path)), "read \(reads): the file was missing")
            let contents = try #require(try? PropertyListFormat.decodeDictionary(bytes), "read \(reads): a torn file of \(bytes.count) bytes")
            if case .integer(let n) = contents["n"] { highest = max(highest, n) }
        }
        #expect(try writer.waitForExit() == 0)
        #expect(try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: path)))["n"] == .integer(Int64(commits)))
        #expect(highest > 1, "the reader saw commits happen (\(reads) reads)")
    }
}
