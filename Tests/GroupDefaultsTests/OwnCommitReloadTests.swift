import Foundation
import PropertyList
import SharedFiles
import Testing

@testable import GroupDefaults

/// A process is told by inotify of its own commits too; reading the file
/// back would only find its own view again, so those reloads read nothing
/// (`InstalledFile`), and every other change is still read.
@Suite struct OwnCommitReloadTests {
    @Test func reloadsOfThisProcesssOwnCommitsReadNothing() throws {
        let f = Fixture()
        let suite = try f.suite()
        try suite.flush()
        // A commit holds its file only while the process holds fewer than `InstalledFile.limit` (other tests
        // running at the same time may hold them all for a moment): commit again until one was held.
        let deadline = Date().addingTimeInterval(30)
        var index: Int64 = 0
        var skippedWithoutReading = false
        while !skippedWithoutReading, Date() < deadline {
            let before = suite.own.statistics
            index += 1
            suite.set(.integer(index), forKey: "k")
            try suite.flush()
            // Inotify tells of the commit; wait until its reload was looked at, one way or the other.
            let looked = Date().addingTimeInterval(10)
            var now = suite.own.statistics
            while now.reloadsOfOwnCommit == before.reloadsOfOwnCommit, now.reloads == before.reloads, Date() < looked {
                #expect(ChangeWatcher.shared.waitUntilIdle())
                try suite.flush()
                now = suite.own.statistics
            }
            skippedWithoutReading = now.reloadsOfOwnCommit > before.reloadsOfOwnCommit && now.reloads == before.reloads
        }
        #expect(skippedWithoutReading)
    }

    @Test func aFileRewrittenInPlaceRightAfterACommitIsRead() throws {
        let f = Fixture()
        let suite = try f.suite()
        suite.set(.string("aaaa"), forKey: "k")
        try suite.flush()
        let path = suite.own.file.path
        // Same size, same inode, most likely the same clock tick: only the kind of event tells it apart.
        let bytes = Array(PropertyListFormat.binary.encode(.dictionary(["k": .string("bbbb")])))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == bytes.count)
        let seen = DispatchSemaphore(value: 0)
        suite.own.addListener { change in if change.changes.contains(where: { $0.key == "k" }) { seen.signal() } }
        let descriptor = open(path, O_WRONLY)
        #expect(descriptor >= 0)
        #expect(write(descriptor, bytes, bytes.count) == bytes.count)
        close(descriptor)
        #expect(seen.wait(timeout: .now() + 10) == .success)
        #expect(suite.value(forKey: "k") == .string("bbbb"))
    }

    @Test func anotherWritersReplacementRightAfterACommitIsRead() throws {
        let f = Fixture()
        let suite = try f.suite()
        suite.set(.string("mine"), forKey: "k")
        try suite.flush()
        let seen = DispatchSemaphore(value: 0)
        suite.own.addListener { change in if change.changes.contains(where: { $0.key == "k" }) { seen.signal() } }
        // Another writer's commit: a new file renamed over this process's.
        let other = try SharedPlistFile(path: suite.own.file.path, root: f.root.path)
        try other.update { $0["k"] = .string("than") }
        #expect(seen.wait(timeout: .now() + 10) == .success)
        #expect(suite.value(forKey: "k") == .string("than"))
    }

    /// Each held file costs a descriptor: a process with very many domains holds at most `InstalledFile.limit`.
    @Test func aProcessWithManyDomainsHoldsABoundedNumberOfFiles() throws {
        let f = Fixture()
        var suites: [GroupDefaults] = []
        for index in 0..<(InstalledFile.limit + 36) {
            let suite = try GroupDefaults(suiteName: "group.com.example.s\(index)", context: f.context(groups: nil), processDomains: f.process)
            suite.set(.integer(Int64(index)), forKey: "k")
            try suite.flush()
            suites.append(suite)
        }
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { descriptor in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor)) ?? ""
            return target.hasPrefix(f.root.path) && target.hasSuffix(".plist")
        }
        #expect(held.count <= InstalledFile.limit)
        withExtendedLifetime(suites) {}
    }
}
