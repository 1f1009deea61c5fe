import Foundation
import Testing
import TestSupport
@testable import GroupDefaults
@testable import SharedFiles
import PropertyList

/// Limits and refusals of the shared-file layer, in one process.
@Suite struct SharedFileSafetyTests {
    @Test func contentsLargerThanTheLimitAreNotWrittenAndStayPending() throws {
        let f = Fixture()
        let defaults = try f.suite()
        defaults.set("small", forKey: "k")
        try defaults.flush()
        let big = PlistValue.data(Data(count: PlistLimits.maximumFileSize + 1))
        defaults.set(big, forKey: "blob")
        do {
            try defaults.flush()
            Issue.record("expected the commit to be refused")
        } catch let error as SharedFileError {
            guard case .contentsTooLarge(let path, let size, let limit) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path == f.root.groupSuitePath(f.group))
            #expect(size > limit)
            #expect("\(error)".contains("nothing was written and the change stays pending"))
        }
        #expect(try SharedPlistFileContents.read(f.root.groupSuitePath(f.group)) == ["k": "small"])
        let folder = (f.root.groupSuitePath(f.group) as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [".\(f.group).plist.lock", "\(f.group).plist"])
        #expect(defaults.value(forKey: "blob") == big)
        defaults.removeObject(forKey: "blob")
        try defaults.flush()
        #expect(try SharedPlistFileContents.read(f.root.groupSuitePath(f.group)) == ["k": "small"])
    }

    @Test func aFIFOOrAFolderIsNotReadAsAFile() throws {
        let root = TemporaryRoot()
        #expect(mkfifo(root.path + "/pipe", 0o600) == 0)
        #expect(throws: SharedFileError.notARegularFile(path: root.path + "/pipe", kind: "a FIFO (named pipe)")) { try readWholeFile(root.path + "/pipe") }
        #expect(throws: SharedFileError.notARegularFile(path: root.path, kind: "a folder")) { try readWholeFile(root.path) }
        try Data(count: 100).write(to: URL(fileURLWithPath: root.path + "/file"))
        #expect(throws: SharedFileError.fileTooLarge(path: root.path + "/file", size: 100, limit: 99)) { try readWholeFile(root.path + "/file", limit: 99) }
        #expect(try readWholeFile(root.path + "/file", limit: 100)?.count == 100)
        #expect(try readWholeFile(root.path + "/absent") == nil)
    }

    @Test func aConfinedFolderRefusesLinksAndNonFoldersOnTheWay() throws {
        let root = TemporaryRoot(), outside = TemporaryRoot()
        try createDirectories(root.path + "/a")
        #expect(symlink(outside.path, root.path + "/a/link") == 0)
        #expect(throws: SharedFileError.symbolicLink(path: root.path + "/a/link")) {
            try ConfinedFolder(root.path + "/a/link/b", top: root.path).withDescriptor(creating: true) { _ in }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        try Data().write(to: URL(fileURLWithPath: root.path + "/a/file"))
        #expect(throws: SharedFileError.notAFolder(path: root.path + "/a/file", kind: "a regular file")) {
            try ConfinedFolder(root.path + "/a/file/b", top: root.path).withDescriptor(creating: true) { _ in }
        }
        #expect(throws: SharedFileError.outsideTop(path: outside.path, top: root.path)) { try ConfinedFolder(outside.path, top: root.path) }
        #expect(throws: SharedFileError.outsideTop(path: root.path + "/a/../..", top: root.path)) { try ConfinedFolder(root.path + "/a/../..", top: root.path) }
        #expect(try ConfinedFolder(root.path + "/a/new/deeper", top: root.path).withDescriptor(creating: false) { _ in 1 } == nil)
        #expect(try ConfinedFolder(root.path + "/a/new/deeper", top: root.path).withDescriptor(creating: true) { _ in 1 } == 1)
        var info = stat()
        #expect(stat(root.path + "/a/new/deeper", &info) == 0 && info.st_mode & 0o777 == 0o700)
    }
}
