import Foundation
import PropertyList
import TestSupport
import Testing

@testable import SharedFiles

/// A commit without fsync writes its temporary in the scratch folder, swaps
/// it in (`RENAME_EXCHANGE`) and then unlinks the old file: what it leaves,
/// and what a writer killed between the two steps leaves.
@Suite struct ExchangeCommitTests {
    let root = TemporaryRoot()
    var path: String { root.path + "/Library/Preferences/suite.plist" }
    var folder: String { root.path + "/Library/Preferences" }
    var scratch: String { folder + "/.groupsim-scratch" }

    private func inode(_ path: String) throws -> UInt64 {
        var info = stat()
        try #require(stat(path, &info) == 0, "stat \(path): errno \(errno)")
        return UInt64(info.st_ino)
    }

    @Test func aCommitOverAFileReplacesItAndLeavesNoTemporary() throws {
        let file = try SharedPlistFile(path: path, durable: false, root: root.path)
        try file.update { $0["k"] = 1 }  // no file yet: a plain rename
        let first = try inode(path)
        let update = try file.update { $0["k"] = 2 }  // over a file: an exchange
        #expect(update.wrote)
        #expect(try inode(path) != first, "the file is a new one, never rewritten in place")
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 2])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [".groupsim-scratch", ".suite.plist.lock", "suite.plist"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
        #expect(try file.lastWriter() == .store)
    }

    @Test func theOldFileLeftAsTheTemporaryByAKilledWriterIsReplacedAndNeverRead() throws {
        let file = try SharedPlistFile(path: path, durable: false, root: root.path)
        try file.update { $0["k"] = 2 }
        // A writer killed after the exchange, before the unlink: the old file is the temporary.
        let old = PropertyListFormat.binary.encode(.dictionary(["k": 1]))
        try old.write(to: URL(fileURLWithPath: scratch + "/.suite.plist.tmp"))
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 2])
        try file.update { $0["other"] = true }
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 2, "other": true])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [".groupsim-scratch", ".suite.plist.lock", "suite.plist"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }

    @Test func aLinkWhereTheScratchFolderBelongsIsRefusedAndNothingIsWrittenThrough() throws {
        let outside = TemporaryRoot()
        let file = try SharedPlistFile(path: path, durable: false, root: root.path)
        try file.update { $0["k"] = 1 }
        try FileManager.default.removeItem(atPath: scratch)
        try FileManager.default.createSymbolicLink(atPath: scratch, withDestinationPath: outside.path)
        #expect(throws: (any Error).self) { try file.update { $0["k"] = 2 } }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 1])
    }

    /// Hostile: a folder where the plist belongs is never swapped into the scratch folder (where it would
    /// stand in every later temporary's way); the commit treats it as durable mode does.
    @Test func aFolderWhereThePlistBelongsNeverReachesTheScratchFolder() throws {
        let file = try SharedPlistFile(path: path, durable: false, root: root.path)
        try file.update { $0["k"] = 1 }
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        _ = try? file.update { $0["k"] = 2 }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
        // Whatever became of the folder, the next commits work.
        _ = try? FileManager.default.removeItem(atPath: path)
        try file.update { $0["k"] = 3 }
        try file.update { $0["k"] = 4 }
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 4])
    }

    @Test func exchangingWithNothingThereIsAPlainRename() throws {
        let file = try SharedPlistFile(path: path, durable: false, root: root.path)
        try file.update { $0["k"] = 1 }
        try FileManager.default.removeItem(atPath: path)
        try file.update { $0["k"] = 3 }
        #expect(try SharedPlistFile.read(path: path, root: root.path) == ["k": 3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [".groupsim-scratch", ".suite.plist.lock", "suite.plist"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
    }
}

/// A file read again with the bytes last read or written is not decoded
/// again; any other bytes are, even of the same size written in place.
@Suite struct DecodedBytesTests {
    let root = TemporaryRoot()
    var path: String { root.path + "/Library/Preferences/suite.plist" }

    @Test func anotherWritersCommitAndAnInPlaceEditOfTheSameSizeAreBothRead() throws {
        let mine = try SharedPlistFile(path: path, durable: false, root: root.path)
        let theirs = try SharedPlistFile(path: path, durable: false, root: root.path)
        try mine.update { $0["k"] = 1 }
        #expect(try mine.read() == ["k": 1])
        try theirs.update { $0["k"] = 2 }
        #expect(try mine.read() == ["k": 2])
        let update = try mine.update { $0["x"] = true }
        #expect(update.before == ["k": 2])
        // Rewritten in place, same size: only the bytes tell.
        let edited = PropertyListFormat.binary.encode(.dictionary(["k": 3, "x": true]))
        #expect(edited.count == (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: edited)
        try handle.close()
        #expect(try mine.read() == ["k": 3, "x": true])
        #expect(try mine.update { $0["y"] = 1 }.before == ["k": 3, "x": true])
    }
}
