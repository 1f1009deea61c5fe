import Foundation
import PropertyList
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One property-list dictionary in a file that many processes read and write.
///
/// The storage primitive of the whole simulator (defaults domains, and the
/// cloud store's device copies and server data):
/// - readers never lock: a file is only ever replaced whole by `rename`, so a
///   reader sees the old or the new version, never a torn one;
/// - writers call `update`, which holds the lock file `.<name>.lock`, reads
///   what is on disk now, lets the caller change it, and atomically replaces
///   the file (a temporary in the scratch folder exchanged with the file;
///   when `durable`, its bytes first written and flushed to the file's
///   `CommitJournal`, from which the first process to open the file after
///   a reboot puts back a commit the file lost).
///
/// Every operation reaches the file's folder afresh from the root through
/// `ConfinedFolder` (no symbolic link followed) and works relative to it.
/// Unchecked Sendable: every stored property is a constant; the file on disk is guarded by `lock` (a `FileLock`),
/// `lastDecoded` by its own mutex.
package final class SharedPlistFile: @unchecked Sendable {
    package let path: String
    package let directory: String
    package let fileName: String
    /// Format of files this writes; either format is read.
    package let format: PropertyListFormat
    /// Whether `update` returns only once the commit is on disk (in the file's `CommitJournal`).
    package let durable: Bool
    /// The largest file this reads and writes: `PlistLimits.maximumFileSize`
    /// for a suite, which bounds what one hostile file costs its readers;
    /// larger for a file whose size only its own device's disk should bound.
    package let maximumSize: Int
    /// Why decoded contents cannot be this file's (nil: they can); contents
    /// it refuses are corrupt, as undecodable bytes are.
    package typealias ContentCheck = @Sendable ([String: PlistValue]) -> String?
    private let contentCheck: ContentCheck?
    private let keepsCorruptFile: Bool
    /// Updates keep and start from cfprefsd's copy (`StoreCopy`).
    private let keepsStoreCopy: Bool
    private let folder: ConfinedFolder
    private let lock: FileLock
    /// One temporary name per file: under the lock, one that exists was left
    /// by a writer that died, and the next writer replaces it.
    private let temporaryName: String
    /// The bytes this object last read or wrote, and their contents: a
    /// file read again with the same bytes (this process's own commit seen
    /// by its watcher, or unchanged under the lock since the last commit)
    /// is not decoded again, and one with other bytes (another process's
    /// commit) reuses the values whose bytes did not change. Equal bytes are
    /// equal contents, so no change by anyone can be missed.
    private let lastDecoded = DecodedBytes()
    /// Whether this object has checked the file against its journal (`recoverAfterReboot`).
    private let checkedAfterBoot = Atomic<Bool>(false)

    /// `root`: the folder the file must stay in; every folder between it and
    /// the file must be a real folder (created 0700 when missing). nil: the
    /// file's own folder.
    /// `maximumSize`: the largest file read and written.
    /// `contentCheck`: what the contents must satisfy, beyond decoding (a
    /// number no writer can have made, say); a file that fails it is kept
    /// aside by the next `update` like any corrupt file.
    /// `readOnly`: for a reader that never writes (an app's managed
    /// preferences): no folder and no lock file is made.
    /// `keepsCorruptFile`: `update` of a corrupt file throws `corrupt`
    /// instead of moving it aside and starting empty, for a file whose loss
    /// would drop more than itself (a device's cloud settings hold its account).
    /// `keepsStoreCopy`: the file is an app's preferences on a device that
    /// reads through cfprefsd's cache (macOS): an update that finds the file
    /// changed by something other than the store starts from the store's last commit (`StoreCopy`).
    package init(
        path: String, format: PropertyListFormat = .binary, durable: Bool = true, root: String? = nil,
        maximumSize: Int = PlistLimits.maximumFileSize, contentCheck: ContentCheck? = nil, readOnly: Bool = false,
        keepsCorruptFile: Bool = false, keepsStoreCopy: Bool = false
    ) throws {
        self.path = path
        self.keepsStoreCopy = keepsStoreCopy
        self.contentCheck = contentCheck
        self.keepsCorruptFile = keepsCorruptFile
        self.format = format
        self.durable = durable
        self.maximumSize = maximumSize
        directory = (path as NSString).deletingLastPathComponent
        fileName = (path as NSString).lastPathComponent
        let top = root ?? directory
        if !readOnly { try createDirectories(top) }
        folder = try ConfinedFolder(directory, top: top)
        lock = FileLock(name: "." + fileName + ".lock")
        temporaryName = "." + fileName + ".tmp"
        if readOnly { return }
        // Fail early, with the path, if the folders or the lock file cannot be made.
        _ = try folder.withDescriptor(creating: true) { [lock, lockPath] in try lock.create(in: $0, path: lockPath) }
    }

    private var lockPath: String { directory + "/" + lock.name }

    /// What is on disk now. An absent file (or folder) is an empty dictionary.
    package func read() throws -> [String: PlistValue] {
        if durable, !checkedAfterBoot.load(ordering: .acquiring) { try checkAfterBoot() }
        let contents: [String: PlistValue]?? = try folder.withDescriptor(creating: false) { try readContents(in: $0) }
        return (contents ?? nil) ?? [:]
    }

    /// Reads a shared plist without opening it for writing: nothing is
    /// created, no folder and no lock file. nil if there is no file. With a
    /// `root`, the folders below it must be real folders, as for writers.
    package static func read(
        path: String, root: String? = nil, maximumSize: Int = PlistLimits.maximumFileSize,
        contentCheck: ContentCheck? = nil
    ) throws -> [String: PlistValue]? {
        let directory = (path as NSString).deletingLastPathComponent
        let folder = try ConfinedFolder(directory, top: root ?? directory)
        let name = (path as NSString).lastPathComponent
        /// nil: a durable writer's journal of an earlier boot, against which the file must be checked first.
        func contents(checkingJournal: Bool) throws -> [String: PlistValue]?? {
            try folder.withDescriptor(creating: false) { descriptor -> [String: PlistValue]?? in
                if checkingJournal, let scratch = ScratchFolder.openIfPresent(in: descriptor) {
                    defer { close(scratch) }
                    if isOfAnotherBoot(CommitJournal.newestHeader(fileName: name, in: scratch)) { return nil }
                }
                return try decode(
                    readRegularFile(named: name, in: descriptor, path: path, limit: maximumSize), path: path, maximumSize: maximumSize,
                    check: contentCheck)
            } ?? .some(nil)
        }
        if let found = try contents(checkingJournal: true) { return found }
        // As any opener does (its folders and lock file exist: the writer made them); then it reads like any reader.
        _ = try SharedPlistFile(path: path, durable: true, root: root, maximumSize: maximumSize, contentCheck: contentCheck).read()
        return try contents(checkingJournal: false) ?? nil
    }

    /// What is on disk now, or nil if something other than the store wrote
    /// it (`CommitStamp`), for a process reading through cfprefsd's cache.
    /// Judged on the descriptor the bytes came from, once they are read: an
    /// edit that lands while the file is read is never taken for a commit.
    package func readUnlessForeign() throws -> [String: PlistValue]? {
        if durable, !checkedAfterBoot.load(ordering: .acquiring) { try checkAfterBoot() }
        var foreign = false
        let found = try folder.withDescriptor(creating: false) { descriptor -> [String: PlistValue]? in
            let bytes = try readRegularFile(named: fileName, in: descriptor, path: path, limit: maximumSize) {
                foreign = CommitStamp.writer(ofOpen: $0) == .foreign
            }
            return foreign ? nil : try contents(of: bytes)
        }
        return foreign ? nil : (found ?? nil) ?? [:]
    }

    private func readContents(in descriptor: Int32) throws -> [String: PlistValue]? {
        try contents(of: readRegularFile(named: fileName, in: descriptor, path: path, limit: maximumSize))
    }

    /// Decodes the bytes read, reusing what did not change since the last read.
    private func contents(of bytes: [UInt8]?) throws -> [String: PlistValue]? {
        guard let bytes else { return nil }
        let last = lastDecoded.last
        if bytes == last?.bytes { return last?.contents }
        // The values that did not change since are reused, not decoded again.
        let contents = try Self.decode(bytes, reusing: last, path: path, maximumSize: maximumSize, check: contentCheck)
        if let contents { lastDecoded.remember(bytes, as: contents) }
        return contents
    }

    /// `reusing`: this object's last bytes and their contents (`PropertyListFormat.decodeDictionary(_:reusing:maximumSize:)`).
    private static func decode(
        _ bytes: [UInt8]?, reusing last: (bytes: [UInt8], contents: [String: PlistValue])? = nil, path: String, maximumSize: Int,
        check: ContentCheck?
    ) throws -> [String: PlistValue]? {
        guard let bytes else { return nil }
        let contents: [String: PlistValue]
        do {
            contents = try PropertyListFormat.decodeDictionary(bytes, reusing: last.map { ($0.bytes, $0.contents) }, maximumSize: maximumSize)
        } catch let error as PropertyListError {
            throw SharedFileError.corrupt(path: path, reason: error.description)
        }
        if let problem = check?(contents) { throw SharedFileError.corrupt(path: path, reason: problem) }
        return contents
    }

    /// The result of one `update`.
    package struct Update: Sendable {
        /// The contents before the change (empty if the file was absent or corrupt).
        package var before: [String: PlistValue]
        /// The contents now on disk.
        package var after: [String: PlistValue]
        /// Whether the file was rewritten (false when the change changed nothing).
        package var wrote: Bool
        /// Set when a corrupt file was found and moved here instead of being overwritten.
        package var corruptFileMovedTo: String?
        package var corruptionReason: String?
        /// Where the time went.
        package var timings = CommitTimings()
        /// The file's size in bytes when this update wrote it.
        package var writtenSize: Int? = nil
        /// The file this update put in place, held open (nil if it wrote nothing, or cannot hold it).
        package var installed: InstalledFile? = nil
    }

    /// Reads, changes and atomically replaces the file under the lock.
    /// `body` sees the current contents; if it leaves them unchanged, nothing is written.
    /// The lock is waited for at most `LockWaitLimit.seconds()`, or until
    /// `deadline` (`MonotonicClock` nanoseconds) when the caller's wait
    /// began earlier (a deadline already past still tries the lock once).
    /// `refusingSize`: contents that would encode to this many bytes or more
    /// are not written (`SharedFileError.sizeLimitReached`), as cfprefsd refuses them on tvOS and watchOS.
    @discardableResult
    package func update(
        deadline given: UInt64? = nil, refusingSize: Int? = nil, _ body: (inout [String: PlistValue]) throws -> Void
    ) throws -> Update {
        let requested = MonotonicClock.now()
        let deadline = try given ?? LockWaitLimit.deadline(from: requested)
        return try startingOverIfRemoved { descriptor in
            try lock.withLock(in: descriptor, path: lockPath, deadline: deadline) {
                if durable, !checkedAfterBoot.load(ordering: .acquiring) {
                    try recoverAfterReboot(in: descriptor)
                    checkedAfterBoot.store(true, ordering: .releasing)
                }
                return try updateLocked(in: descriptor, requested: requested, refusingSize: refusingSize, body)
            }
        }
    }

    /// Whether the file was last written by an update (any process's, or a
    /// tool's through this type), by something else, or is absent (`CommitStamp`).
    package func lastWriter() throws -> CommitStamp.Writer {
        try folder.withDescriptor(creating: false) { CommitStamp.writer(of: fileName, in: $0) } ?? .absent
    }

    /// Deletes the file under the lock (as `defaults delete DOMAIN` does).
    /// Returns false if there was no file.
    @discardableResult
    package func remove() throws -> Bool {
        let deadline = try LockWaitLimit.deadline(from: MonotonicClock.now())
        return try startingOverIfRemoved { descriptor in
            try lock.withLock(in: descriptor, path: lockPath, deadline: deadline) {
                forgetJournal(in: descriptor)
                if unlinkat(descriptor, fileName, 0) == 0 { return true }
                if errno == ENOENT { return false }
                throw SharedFileError.systemCall(operation: "delete", path: path, errno: errno)
            }
        }
    }

    /// Moves the file aside under the lock, to `<name>.corrupt-<timestamp>`
    /// beside it (never overwritten), for a reader that found it readable
    /// but not of the shape it needs; returns where it went, nil if there
    /// was no file.
    @discardableResult
    package func setAside() throws -> String? {
        let deadline = try LockWaitLimit.deadline(from: MonotonicClock.now())
        return try startingOverIfRemoved { descriptor in
            try lock.withLock(in: descriptor, path: lockPath, deadline: deadline) {
                var info = stat()
                guard fstatat(descriptor, fileName, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
                forgetJournal(in: descriptor)
                let moved = try moveAside(in: descriptor)
                if durable { try systemCall("fsync the folder", directory) { fsync(descriptor) } }
                return moved
            }
        }
    }

    /// Runs `operation` in the folder (created if missing); if the folder is
    /// removed during it (a device erased), the lock taken there protects
    /// nothing, so it starts over in the folder made again.
    private func startingOverIfRemoved<T>(_ operation: (Int32) throws -> T) throws -> T {
        var attempts = 0
        while true {
            attempts += 1
            do {
                guard let result = try folder.withDescriptor(creating: true, operation) else {
                    throw SharedFileError.systemCall(operation: "open the folder", path: directory, errno: ENOENT)
                }
                return result
            } catch SharedFileError.folderRemoved(let operation, let path, let errno) {
                if attempts == 3 { throw SharedFileError.systemCall(operation: operation, path: path, errno: errno) }
            }
        }
    }

    private func updateLocked(
        in descriptor: Int32, requested: UInt64, refusingSize: Int?, _ body: (inout [String: PlistValue]) throws -> Void
    ) throws -> Update {
        var timings = CommitTimings()
        var mark = MonotonicClock.now()
        timings.lockWait = mark - requested
        var movedTo: String? = nil
        var reason: String? = nil
        var current: [String: PlistValue]
        do {
            current = try readContents(in: descriptor) ?? [:]
        } catch SharedFileError.corrupt(let path, let why) {
            if keepsCorruptFile { throw SharedFileError.corrupt(path: path, reason: why) }
            // Never overwrite a corrupt file: keep it for inspection and start empty.
            movedTo = try moveAside(in: descriptor)
            reason = why
            current = [:]
        }
        // Through cfprefsd's cache, a file the store did not write gives way to the store's copy.
        if keepsStoreCopy, movedTo == nil, let copy = storeCopy(in: descriptor) { current = copy }
        let before = current
        timings.readAndDecode = MonotonicClock.now() - mark
        try body(&current)
        let changed = current != before || movedTo != nil
        var writtenSize: Int? = nil
        var installed: InstalledFile? = nil
        if changed {
            mark = MonotonicClock.now()
            // One copy as bytes, for the file, the journal and `lastDecoded`.
            let bytes = format.encodedBytes(.dictionary(current))
            timings.encode = MonotonicClock.now() - mark
            guard bytes.count <= maximumSize else {
                throw SharedFileError.contentsTooLarge(path: path, size: bytes.count, limit: maximumSize)
            }
            if let refusingSize, bytes.count >= refusingSize {
                throw SharedFileError.sizeLimitReached(path: path, size: bytes.count, limit: refusingSize)
            }
            try replace(in: descriptor, with: bytes, timings: &timings)
            lastDecoded.remember(bytes, as: current)
            writtenSize = bytes.count
            // Still under the lock: what is at the name now is what was just written.
            installed = InstalledFile(named: fileName, in: descriptor)
        }
        return Update(
            before: before, after: current, wrote: changed, corruptFileMovedTo: movedTo, corruptionReason: reason, timings: timings,
            writtenSize: writtenSize, installed: installed)
    }

    /// Flushes every folder from the file's own up to the top (`fsync` of
    /// each), so that the scratch folder and each folder above it are on
    /// disk by name: folders made without a flush (by the walk, by whoever
    /// installed an app, or by a commit before the root became durable) would
    /// otherwise take a durable file and its journal with them in a power
    /// loss. Called when a journal slot is made or grown, so about twice per
    /// file, not per commit. Walked up by `..` from the open folder, which
    /// follows no link.
    private func flushFolders(upFrom folder: Int32) throws {
        try systemCall("fsync the folder", directory) { fsync(folder) }
        var current = dup(folder)
        guard current >= 0 else { throw SharedFileError.systemCall(operation: "open the folder", path: directory, errno: errno) }
        defer { close(current) }
        var path = directory
        for _ in 0..<self.folder.components.count {
            path = (path as NSString).deletingLastPathComponent
            let parent = openat(current, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            // Removed meanwhile (a device erased): the exchange that follows finds it, and the commit starts over.
            if parent == -1 && errno == ENOENT { return }
            guard parent >= 0 else { throw SharedFileError.systemCall(operation: "open the folder", path: path, errno: errno) }
            close(current)
            current = parent
            try systemCall("fsync the folder", path) { fsync(current) }
        }
    }

    /// Replaces the file with `bytes`: a temporary in the scratch folder,
    /// exchanged with the file (`exchangeIntoPlace`); when `durable`, the
    /// bytes are in the journal, flushed, before the exchange, in a slot
    /// other than `keeping`'s (the record being put back).
    private func replace(in folder: Int32, with bytes: [UInt8], timings: inout CommitTimings, keeping: Int? = nil) throws {
        var mark = MonotonicClock.now()
        let scratch = try ScratchFolder.open(in: folder, folderPath: directory, durable: durable)
        defer { close(scratch) }
        let scratchPath = directory + "/" + ScratchFolder.name
        // Under the lock, a temporary already there was left by a writer that died: it is replaced.
        let written = try writeTemporaryFile(bytes, named: temporaryName, in: scratch, folderPath: scratchPath, durable: false, stamped: true)
        do {
            if keepsStoreCopy { try StoreCopy.keep(bytes, written: written, fileName: fileName, in: scratch, scratchPath: scratchPath) }
            if durable {
                try CommitJournal.append(
                    bytes, for: CommitJournal.Identity(written), fileName: fileName, in: scratch, scratchPath: scratchPath,
                    keeping: keeping, slotMade: { try flushFolders(upFrom: folder) })
            }
            timings.writeAndJournal = MonotonicClock.now() - mark
            mark = MonotonicClock.now()
            try exchangeIntoPlace(temporaryName, in: scratch, as: fileName, in: folder, folderPath: directory)
        } catch {
            unlinkat(scratch, temporaryName, 0)
            throw error
        }
        timings.exchange = MonotonicClock.now() - mark
    }

    // MARK: After a reboot

    /// `recoverAfterReboot` under the lock, for a reader: only when the
    /// journal's newest record is of an earlier boot (or the boot is unknown).
    private func checkAfterBoot() throws {
        let stale = try folder.withDescriptor(creating: false) { descriptor -> Bool in
            guard let scratch = ScratchFolder.openIfPresent(in: descriptor) else { return false }
            defer { close(scratch) }
            return Self.isOfAnotherBoot(CommitJournal.newestHeader(fileName: fileName, in: scratch))
        }
        if stale == true {
            let deadline = try LockWaitLimit.deadline(from: MonotonicClock.now())
            try startingOverIfRemoved { descriptor in
                try lock.withLock(in: descriptor, path: lockPath, deadline: deadline) { try recoverAfterReboot(in: descriptor) }
            }
        }
        checkedAfterBoot.store(true, ordering: .releasing)
    }

    private static func isOfAnotherBoot(_ header: CommitJournal.Header?) -> Bool {
        guard let header else { return false }
        return BootIdentity.current.map { $0 != header.boot } ?? true
    }

    /// Under the lock, once per object, when the journal's newest record is
    /// of an earlier boot: the machine stopped since the last durable
    /// commit, and the file may not hold it. The newest whole record is put
    /// back (as a commit: watchers are told) when the file is missing, when
    /// it is the file of the record before with that record's bytes (the
    /// exchange never reached the disk), or when it is a recorded file whose
    /// bytes are not a property list (its data never reached the disk). When
    /// the file holds the newest record's bytes, the record is written again
    /// with this boot, so later openers skip the check. Any other file was
    /// written since by something else, even if it took a recorded file's
    /// inode number (ext4 reuses them at once), and is left as it is; the
    /// journal, which no longer describes it, is removed.
    private func recoverAfterReboot(in folder: Int32) throws {
        guard let scratch = ScratchFolder.openIfPresent(in: folder) else { return }
        defer { close(scratch) }
        guard Self.isOfAnotherBoot(CommitJournal.newestHeader(fileName: fileName, in: scratch)) else { return }
        let records = CommitJournal.records(fileName: fileName, in: scratch, limit: maximumSize)
        guard let newest = records.first else { return }
        var info = stat()
        let present = fstatat(folder, fileName, &info, AT_SYMLINK_NOFOLLOW) == 0
        let identity = present ? CommitJournal.Identity(info) : nil
        let onDisk = present ? (try? readRegularFile(named: fileName, in: folder, path: path, limit: maximumSize)) ?? nil : nil
        if let identity, onDisk == newest.bytes {
            let scratchPath = directory + "/" + ScratchFolder.name
            try CommitJournal.append(
                newest.bytes, for: identity, fileName: fileName, in: scratch, scratchPath: scratchPath, keeping: newest.slot,
                slotMade: { try flushFolders(upFrom: folder) })
            return
        }
        let exchangeLost = records.dropFirst().contains { $0.identity == identity && $0.bytes == onDisk }
        let dataLost =
            records.contains { $0.identity == identity }
            && (try? Self.decode(onDisk ?? [], path: path, maximumSize: maximumSize, check: contentCheck)) == nil
        guard !present || exchangeLost || dataLost else {
            CommitJournal.remove(fileName: fileName, in: scratch)
            return
        }
        var timings = CommitTimings()
        try replace(in: folder, with: newest.bytes, timings: &timings, keeping: newest.slot)
    }

    /// Removes the journal and the store's copy (the file is being deleted or set aside: neither a reboot nor
    /// cfprefsd's next save may bring its last commit back).
    private func forgetJournal(in folder: Int32) {
        guard let scratch = ScratchFolder.openIfPresent(in: folder) else { return }
        CommitJournal.remove(fileName: fileName, in: scratch)
        StoreCopy.remove(fileName: fileName, in: scratch)
        close(scratch)
    }

    /// The store's copy, decoded, when the file was changed by something else since the store's last commit (`StoreCopy`).
    private func storeCopy(in folder: Int32) -> [String: PlistValue]? {
        guard let scratch = ScratchFolder.openIfPresent(in: folder) else { return nil }
        defer { close(scratch) }
        guard let bytes = StoreCopy.bytesInstead(ofFile: fileName, in: folder, scratch: scratch, limit: maximumSize) else { return nil }
        // A copy that does not decode (torn by a crash) is no copy: the file is taken as it is.
        return (try? Self.decode(bytes, path: path, maximumSize: maximumSize, check: contentCheck)) ?? nil
    }

    /// Moves a corrupt file to `<name>.corrupt-<timestamp>` beside it and returns the new path.
    private func moveAside(in folder: Int32) throws -> String {
        let stamp = Date().formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: false).timeSeparator(.omitted).dateSeparator(.omitted))
        var target = "\(fileName).corrupt-\(stamp)"
        var suffix = 1
        var info = stat()
        while fstatat(folder, target, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            suffix += 1
            target = "\(fileName).corrupt-\(stamp)-\(suffix)"
        }
        try systemCall("move the corrupt file aside", path) { renameat(folder, fileName, folder, target) }
        return directory + "/" + target
    }
}
