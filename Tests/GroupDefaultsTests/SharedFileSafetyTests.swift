import Foundation
import PropertyList
import Synchronization
import TestSupport
import Testing

@testable import GroupDefaults
@testable import SharedFiles

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
            guard case .contentsTooLarge(let path, let size, let limit) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(path == f.root.groupSuitePath(f.group))
            #expect(size > limit)
            #expect("\(error)".contains("nothing was written and the change stays pending"))
        }
        #expect(try SharedPlistFileContents.read(f.root.groupSuitePath(f.group)) == ["k": "small"])
        let folder = (f.root.groupSuitePath(f.group) as NSString).deletingLastPathComponent
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [
                ".\(f.group).plist.lock", ".groupsim-scratch", "\(f.group).plist",
            ])
        // The small commit's journal, and no temporary of the refused one.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder + "/.groupsim-scratch").sorted() == [
                ".\(f.group).plist.journal-0", ".\(f.group).plist.journal-1",
            ])
        #expect(defaults.value(forKey: "blob") == big)
        defaults.removeObject(forKey: "blob")
        try defaults.flush()
        #expect(try SharedPlistFileContents.read(f.root.groupSuitePath(f.group)) == ["k": "small"])
    }

    @Test func aFIFOOrAFolderIsNotReadAsAFile() throws {
        let root = TemporaryRoot()
        #expect(mkfifo(root.path + "/pipe", 0o600) == 0)
        #expect(throws: SharedFileError.notARegularFile(path: root.path + "/pipe", kind: "a FIFO (named pipe)")) {
            try readWholeFile(root.path + "/pipe")
        }
        #expect(throws: SharedFileError.notARegularFile(path: root.path, kind: "a folder")) { try readWholeFile(root.path) }
        try Data(count: 100).write(to: URL(fileURLWithPath: root.path + "/file"))
        #expect(throws: SharedFileError.fileTooLarge(path: root.path + "/file", size: 100, limit: 99)) {
            try readWholeFile(root.path + "/file", limit: 99)
        }
        #expect(try readWholeFile(root.path + "/file", limit: 100)?.count == 100)
        #expect(try readWholeFile(root.path + "/absent") == nil)
    }

    @Test func aFolderThatFillsAgainWhileItIsRemovedIsEmptiedAgain() throws {
        // A device is erased while its processes run: one of them keeps
        // writing a file into a folder the erase is removing.
        let root = TemporaryRoot()
        let top = open(root.path, O_RDONLY | O_DIRECTORY)
        try #require(top >= 0)
        defer { close(top) }
        let stop = Mutex(false)
        let stopped = DispatchSemaphore(value: 0)
        let writer = Thread {
            while !stop.withLock({ $0 }) {
                mkdir(root.path + "/stores", 0o700)
                let file = open(root.path + "/stores/copy.plist", O_CREAT | O_WRONLY, 0o600)
                if file >= 0 { close(file) }
                // A process writes at most a commit's pace (a fsync'd commit takes about a
                // millisecond); a writer with no pause at all could win every one of the
                // removal's refills on a loaded machine, which no simulated process does.
                usleep(100)
            }
            stopped.signal()
        }
        writer.start()
        defer {
            stop.withLock { $0 = true }
            stopped.wait()
        }
        for _ in 0..<300 {
            mkdir(root.path + "/stores", 0o700)
            try FolderTree.removeContents(of: top, path: root.path)
        }
    }

    @Test func aConfinedFolderRefusesLinksAndNonFoldersOnTheWay() throws {
        let root = TemporaryRoot()
        let outside = TemporaryRoot()
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
        #expect(throws: SharedFileError.outsideTop(path: root.path + "/a/../..", top: root.path)) {
            try ConfinedFolder(root.path + "/a/../..", top: root.path)
        }
        #expect(try ConfinedFolder(root.path + "/a/new/deeper", top: root.path).withDescriptor(creating: false) { _ in 1 } == nil)
        #expect(try ConfinedFolder(root.path + "/a/new/deeper", top: root.path).withDescriptor(creating: true) { _ in 1 } == 1)
        var info = stat()
        #expect(stat(root.path + "/a/new/deeper", &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test func theLockWaitIsConfiguredOrRefused() throws {
        #expect(try LockWaitLimit.parse(nil).get() == 10)
        #expect(try LockWaitLimit.parse("").get() == 10)
        #expect(try LockWaitLimit.parse("2.5").get() == 2.5)
        #expect(try LockWaitLimit.parse("0").get() == 0)
        for bad in ["soon", "-1", "inf", "nan", "1e9"] {
            #expect(throws: SharedFileError.invalidLockTimeout(value: bad)) { try LockWaitLimit.parse(bad).get() }
        }
        #expect("\(SharedFileError.invalidLockTimeout(value: "soon"))".contains("GROUPSIM_LOCK_TIMEOUT='soon' is not a number of seconds"))
    }

    @Test func theLockHolderIsFoundInProcLocks() throws {
        let table = """
            1: POSIX  ADVISORY  WRITE 999 08:01:1234 0 EOF
            2: FLOCK  ADVISORY  WRITE 4321 fd:01:1234 0 EOF
            2: -> FLOCK  ADVISORY  WRITE 555 fd:01:1234 0 EOF
            3: FLOCK  ADVISORY  WRITE 777 fd:01:99 0 EOF
            """
        let device = UInt64(0xfd) << 8 | 0x01
        #expect(LockHolder.holderPID(device: device, inode: 1234, locks: table) == 4321)
        #expect(LockHolder.holderPID(device: device, inode: 5, locks: table) == nil)
        #expect(LockHolder.holderPID(device: 0x0801, inode: 1234, locks: table) == nil)

        // A real flock, held here through a second open file description.
        let root = TemporaryRoot()
        let path = root.path + "/lock"
        let holder = open(path, O_RDONLY | O_CREAT, 0o600)
        let waiter = open(path, O_RDONLY)
        defer {
            close(holder)
            close(waiter)
        }
        #expect(flock(holder, LOCK_EX) == 0)
        let found = LockHolder.find(lockedFile: waiter)
        #expect(found?.pid == getpid())
        #expect(found?.name != nil)
    }

    @Test func aLockHeldLongerThanTheWaitFailsNamingTheHolder() throws {
        let root = TemporaryRoot()
        let file = try SharedPlistFile(path: root.path + "/domain.plist")
        let holder = open(root.path + "/.domain.plist.lock", O_RDONLY)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX) == 0)
        let lock = FileLock(name: ".domain.plist.lock")
        let folder = open(root.path, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        do {
            try lock.withLock(in: folder, path: root.path + "/.domain.plist.lock", deadline: MonotonicClock.now() + 50_000_000) {}
            Issue.record("expected a timeout")
        } catch let error as SharedFileError {
            guard case .lockTimeout(_, _, let found) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(found?.pid == getpid())
            #expect("\(error)".contains("Nothing was written; the change stays pending"))
        }
        flock(holder, LOCK_UN)
        try file.update { $0["k"] = "v" }
        #expect(try file.read() == ["k": "v"])
    }
}

/// A file whose contents decode but fail the file's content check (a number
/// no writer makes) is a corrupt file: reads refuse it naming why, the next
/// update keeps it aside and starts from nothing.
@Suite struct ContentCheckTests {
    let root = TemporaryRoot()

    @Test func contentsFailingTheCheckAreKeptAsideLikeACorruptFile() throws {
        let path = root.path + "/counters.plist"
        let check: SharedPlistFile.ContentCheck = { fields in
            if case .integer(let next)? = fields["next"], next == .max { return "next is Int64.max" }
            return nil
        }
        try Data(BinaryPropertyList.encode(["next": .integer(.max)])).write(to: URL(fileURLWithPath: path))
        #expect(throws: SharedFileError.self) { try SharedPlistFile.read(path: path, root: root.path, contentCheck: check) }
        #expect(try SharedPlistFile.read(path: path, root: root.path)?["next"] == .integer(.max), "without the check it reads as it is")
        let file = try SharedPlistFile(path: path, root: root.path, contentCheck: check)
        do {
            _ = try file.read()
            Issue.record("read through the check")
        } catch {
            #expect("\(error)".contains("next is Int64.max"), "\(error)")
        }
        let update = try file.update { $0["next"] = .integer(1) }
        #expect(update.before.isEmpty && update.corruptionReason == "next is Int64.max")
        #expect(update.corruptFileMovedTo.map { FileManager.default.fileExists(atPath: $0) } == true)
        #expect(try file.read() == ["next": .integer(1)])
    }
}

@Suite struct ErrorClauseTests {
    struct Described: Error, CustomStringConvertible { let description: String }

    @Test func onlyASingleFinalPeriodIsDropped() {
        #expect(errorClause(Described(description: "it failed; move it away.")) == "it failed; move it away")
        #expect(errorClause(Described(description: "it failed")) == "it failed")
        #expect(errorClause(Described(description: "it is still going...")) == "it is still going...")
        #expect(errorClause(Described(description: "")) == "")
    }
}
