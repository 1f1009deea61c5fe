import Foundation
import PropertyList
import TestSupport
import Testing

@testable import SharedFiles

/// A durable commit writes its bytes to the file's journal before the
/// exchange; the first process to open the file after a reboot puts back
/// what the file lost. A power loss cannot be caused here: each test makes
/// the state one leaves on disk (the file before the last exchange, an
/// empty file, a torn record) and marks the records as of an earlier boot.
@Suite struct CommitJournalTests {
    let root = TemporaryRoot()
    var folder: String { root.path + "/Library/Preferences" }
    var path: String { folder + "/suite.plist" }
    var scratch: String { folder + "/.groupsim-scratch" }

    private func durableFile() throws -> SharedPlistFile { try SharedPlistFile(path: path, durable: true, root: root.path) }

    private func slotPath(_ slot: Int) -> String { scratch + "/" + CommitJournal.slotName("suite.plist", slot) }

    private func inode(_ path: String) throws -> UInt64 {
        var info = stat()
        try #require(stat(path, &info) == 0, "stat \(path): errno \(errno)")
        return UInt64(info.st_ino)
    }

    /// The slot's header; nil if it has none (or there is no slot).
    private func header(_ slot: Int) throws -> CommitJournal.Header? {
        guard FileManager.default.fileExists(atPath: slotPath(slot)) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: slotPath(slot)))
        return CommitJournal.decode(Array(data.prefix(CommitJournal.headerSize)))
    }

    /// What a reboot does to the records: they are of an earlier boot.
    private func rebootMachine() throws {
        for slot in 0..<CommitJournal.slotCount {
            guard var header = try header(slot) else { continue }
            header.boot = 42
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: slotPath(slot)))
            try handle.write(contentsOf: CommitJournal.encode(header))
            try handle.close()
        }
    }

    /// The file as it was before the last commit's exchange, as a power loss leaves it when the exchange never
    /// reached the disk: `commit` runs while a link keeps the old file, which then goes back to the path.
    private func losingTheExchange(of commit: () throws -> Void) throws {
        let kept = folder + "/kept"
        try #require(link(path, kept) == 0)
        try commit()
        try #require(rename(kept, path) == 0)
    }

    @Test func aCommitWritesARecordOfTheFileItPutsInPlaceAlternatingSlots() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        try file.update { $0["k"] = 2 }
        let headers = try (0..<2).map { try #require(try header($0)) }
        #expect(Set(headers.map(\.generation)) == [1, 2])
        let newest = try #require(headers.max { $0.generation < $1.generation })
        #expect(newest.inode == (try inode(path)))
        #expect(newest.boot == BootIdentity.current ?? 0)
        let records = CommitJournal.records(fileName: "suite.plist", in: open(scratch, O_RDONLY | O_DIRECTORY), limit: 1 << 20)
        #expect(records.first?.bytes == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [".groupsim-scratch", ".suite.plist.lock", "suite.plist"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).sorted() == [".suite.plist.journal-0", ".suite.plist.journal-1"])
    }

    @Test func anExchangeLostWithThePowerIsPutBackByTheFirstReaderAfterTheReboot() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        try losingTheExchange { try file.update { $0["k"] = 2 } }
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 1])
        try rebootMachine()
        #expect(try durableFile().read() == ["k": 2])
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 2])
        #expect(try header(0)?.boot == BootIdentity.current ?? 0 || header(1)?.boot == BootIdentity.current ?? 0)
    }

    /// A reader that opens nothing for writing (the device's clock, a widget's budget, the root's settings).
    @Test func aOneShotReaderAfterTheRebootSeesWhatWasPutBack() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        try losingTheExchange { try file.update { $0["k"] = 2 } }
        try rebootMachine()
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 2])
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 2])
    }

    @Test func anEmptyFileAfterTheRebootIsPutBackByTheFirstWriter() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        try #require(truncate(path, 0) == 0)  // the new file's data never reached the disk
        try rebootMachine()
        let update = try durableFile().update { $0["other"] = true }
        #expect(update.before == ["k": 1])
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 1, "other": true])
    }

    @Test func aMissingFileIsPutBack() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        try FileManager.default.removeItem(atPath: path)
        try rebootMachine()
        #expect(try durableFile().read() == ["k": 1])
    }

    @Test func aTornRecordLeavesTheOneBeforeIt() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        try losingTheExchange { try file.update { $0["k"] = 2 } }
        try #require(truncate(path, 0) == 0)
        // The newest record's bytes torn: its commit never returned, the one before is the last whole one.
        let newestSlot = try #require((0..<2).max { (try? header($0)?.generation) ?? 0 < (try? header($1)?.generation) ?? 0 })
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: slotPath(newestSlot)))
        try handle.seek(toOffset: UInt64(CommitJournal.headerSize + 1))
        try handle.write(contentsOf: Data([0xFF, 0xFE, 0xFD]))
        try handle.close()
        try rebootMachine()
        #expect(try durableFile().read() == ["k": 1])
    }

    @Test func aWholeFileIsLeftAsItIsAndItsRecordMarkedWithThisBoot() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        let before = try inode(path)
        try rebootMachine()
        #expect(try durableFile().read() == ["k": 1])
        #expect(try inode(path) == before)
        let newest = try #require((0..<2).compactMap { try header($0) }.max { $0.generation < $1.generation })
        #expect(newest.boot == BootIdentity.current ?? 0)
        #expect(newest.inode == before)
    }

    @Test func aFileWrittenSinceBySomethingElseIsLeftAsItIs() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        try PropertyListFormat.binary.encode(.dictionary(["hand": "edited"])).write(to: URL(fileURLWithPath: path), options: .atomic)
        try rebootMachine()
        #expect(try durableFile().read() == ["hand": "edited"])
        // The journal, which describes a file no longer there, is gone: no later opener looks again.
        #expect(try header(0) == nil && header(1) == nil)
    }

    @Test func aGenerationThatCouldWrapIsNoRecord() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        var header = try #require(try header(0))
        header.generation = UInt64.max
        try Data(CommitJournal.encode(header)).write(to: URL(fileURLWithPath: slotPath(1)))
        #expect(CommitJournal.decode(CommitJournal.encode(header)) == nil)
        try file.update { $0["k"] = 2 }
        try file.update { $0["k"] = 3 }
        try rebootMachine()
        #expect(try durableFile().read() == ["k": 3])
    }

    @Test func aDeletedFileStaysDeletedAfterAReboot() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        #expect(try file.remove())
        try rebootMachine()
        #expect(try durableFile().read() == [:])
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Commits without the journal (a `process` root's, after durable ones) make new files, and ext4 hands
    /// them the inode numbers the records name: their contents, whole, are kept after a reboot all the same.
    @Test func laterCommitsWithoutTheJournalAreKeptAfterAReboot() throws {
        try durableFile().update { $0["k"] = 1 }
        try durableFile().update { $0["k"] = 2 }
        let named = try Set((0..<2).compactMap { try header($0)?.inode })
        let quick = try SharedPlistFile(path: path, durable: false, root: root.path)
        var reused = false
        for value in 3...40 {
            try quick.update { $0["k"] = .integer(Int64(value)) }
            let now = try inode(path)
            reused = reused || named.contains(now)
        }
        try rebootMachine()
        #expect(try durableFile().read() == ["k": 40], "a recorded inode number was reused: \(reused)")
        #expect(try header(0) == nil && header(1) == nil)
    }

    // MARK: Hostile slots

    @Test func aFIFOOrALinkWhereASlotBelongsFailsTheCommitNamingItAndChangesNothing() throws {
        let outside = TemporaryRoot()
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        for plant in ["fifo", "link"] {
            for slot in 0..<2 { try? FileManager.default.removeItem(atPath: slotPath(slot)) }
            if plant == "fifo" {
                try #require(mkfifo(slotPath(1), 0o600) == 0)
            } else {
                try FileManager.default.createSymbolicLink(atPath: slotPath(1), withDestinationPath: outside.path + "/target")
            }
            #expect {
                try file.update { $0["k"] = 2 }
            } throws: { error in
                "\(error)".contains(slotPath(1))
            }
            #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 1])
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: scratch + "/.suite.plist.tmp"))
        }
    }

    @Test func garbageAndEdgeLengthsInASlotAreNoRecordAndAreWrittenOver() throws {
        let file = try durableFile()
        try file.update { $0["k"] = 1 }
        let written = try #require(try header(0))
        for length in [UInt64(Int64.max), UInt64.max, UInt64(Int32.max), 1 << 40] {
            var header = written
            header.generation += 10
            header.length = 0
            var raw = CommitJournal.encode(header)
            // The length field replaced, and the header's own hash made right again: only the length is wrong.
            withUnsafeBytes(of: length.littleEndian) { raw.replaceSubrange(16..<24, with: $0) }
            let hash = CommitJournal.hash(Array(raw[0..<64]))
            withUnsafeBytes(of: hash.littleEndian) { raw.replaceSubrange(64..<72, with: $0) }
            for slot in 0..<2 { try Data(raw).write(to: URL(fileURLWithPath: slotPath(slot))) }
            let records = CommitJournal.records(fileName: "suite.plist", in: open(scratch, O_RDONLY | O_DIRECTORY), limit: 1 << 20)
            #expect(records.isEmpty)
            try rebootMachine()
            #expect(try durableFile().read() == ["k": 1], "length \(length)")
        }
        for slot in 0..<2 { try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: slotPath(slot))) }
        try file.update { $0["k"] = 3 }
        try rebootMachine()
        #expect(try durableFile().read() == ["k": 3])
    }
}
