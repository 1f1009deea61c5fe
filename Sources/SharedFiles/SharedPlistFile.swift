import Foundation
import PropertyList
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
///   the file (temporary file, fsync, rename, fsync of the folder).
public final class SharedPlistFile: @unchecked Sendable {
    public let path: String
    public let directory: String
    public let fileName: String
    /// Format of files this writes; either format is read.
    public let format: PropertyListFormat
    /// Whether `update` fsyncs the file and the folder before returning.
    public let durable: Bool
    private let lock: FileLock
    /// Creates a missing folder; the simulation root passes one that refuses
    /// folders resolving outside it, also when a vanished folder is recreated.
    private let prepareDirectory: @Sendable (String) throws -> Void
    /// Guarded by the lock: stale temporaries are swept on the first update.
    private var sweptTemporaries = false
    private var temporaryCounter = 0

    public init(
        path: String, format: PropertyListFormat = .binary, durable: Bool = true,
        prepareDirectory: @escaping @Sendable (String) throws -> Void = createDirectories
    ) throws {
        self.path = path
        self.format = format
        self.durable = durable
        self.prepareDirectory = prepareDirectory
        directory = (path as NSString).deletingLastPathComponent
        fileName = (path as NSString).lastPathComponent
        try prepareDirectory(directory)
        lock = try FileLock(path: directory + "/." + fileName + ".lock", prepareDirectory: prepareDirectory)
    }

    /// What is on disk now. An absent file is an empty dictionary.
    public func read() throws -> [String: PlistValue] {
        try Self.read(path: path) ?? [:]
    }

    /// Reads a shared plist without opening it for writing: nothing is
    /// created, no folder and no lock file. nil if there is no file.
    public static func read(path: String) throws -> [String: PlistValue]? {
        guard let bytes = try readWholeFile(path) else { return nil }
        do {
            return try PropertyListFormat.decodeDictionary(Data(bytes))
        } catch let error as PropertyListError {
            throw SharedFileError.corrupt(path: path, reason: error.description)
        }
    }

    /// The result of one `update`.
    public struct Update: Sendable {
        /// The contents before the change (empty if the file was absent or corrupt).
        public var before: [String: PlistValue]
        /// The contents now on disk.
        public var after: [String: PlistValue]
        /// Whether the file was rewritten (false when the change changed nothing).
        public var wrote: Bool
        /// Set when a corrupt file was found and moved here instead of being overwritten.
        public var corruptFileMovedTo: String?
        public var corruptionReason: String?
        /// Where the time went.
        public var timings = CommitTimings()
    }

    /// Reads, changes and atomically replaces the file under the lock.
    /// `body` sees the current contents; if it leaves them unchanged, nothing is written.
    @discardableResult
    public func update(_ body: (inout [String: PlistValue]) throws -> Void) throws -> Update {
        var timings = CommitTimings()
        let requested = MonotonicClock.now()
        return try lock.withLock {
            var mark = MonotonicClock.now()
            timings.lockWait = mark - requested
            if !sweptTemporaries { sweepTemporaries(); sweptTemporaries = true }
            var movedTo: String? = nil
            var reason: String? = nil
            var current: [String: PlistValue]
            do {
                current = try read()
            } catch SharedFileError.corrupt(_, let why) {
                // Never overwrite a corrupt file: keep it for inspection and start empty.
                movedTo = try moveAside()
                reason = why
                current = [:]
            }
            let before = current
            timings.readAndDecode = MonotonicClock.now() - mark
            try body(&current)
            let changed = current != before || movedTo != nil
            if changed {
                mark = MonotonicClock.now()
                let bytes = format.encode(.dictionary(current))
                timings.encode = MonotonicClock.now() - mark
                try replace(with: bytes, timings: &timings)
            }
            return Update(before: before, after: current, wrote: changed, corruptFileMovedTo: movedTo, corruptionReason: reason, timings: timings)
        }
    }

    /// Deletes the file under the lock (as `defaults delete DOMAIN` does).
    /// Returns false if there was no file.
    @discardableResult
    public func remove() throws -> Bool {
        try lock.withLock {
            if unlink(path) == 0 { return true }
            if errno == ENOENT { return false }
            throw FileSystemError(operation: "delete", path: path, errno: errno)
        }
    }

    /// Replaces the file with `bytes` (temporary file, fsync, rename, fsync folder).
    private func replace(with bytes: Data, timings: inout CommitTimings) throws {
        var mark = MonotonicClock.now()
        temporaryCounter += 1
        let temporary = "\(directory)/.\(fileName).tmp.\(getpid()).\(temporaryCounter)"
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd == -1 && errno == ENOENT {
            // The folder vanished (a device erased under us): recreate it.
            try prepareDirectory(directory)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        if fd == -1 { throw FileSystemError(operation: "create the temporary file", path: temporary, errno: errno) }
        do {
            defer { close(fd) }
            try bytes.withUnsafeBytes { raw in
                var written = 0
                while written < raw.count {
                    let count = try systemCall("write", temporary) {
                        Int32(write(fd, raw.baseAddress! + written, raw.count - written))
                    }
                    written += Int(count)
                }
            }
            if durable { try systemCall("fsync", temporary) { fsync(fd) } }
        } catch {
            unlink(temporary)
            throw error
        }
        timings.writeAndFsync = MonotonicClock.now() - mark
        mark = MonotonicClock.now()
        do {
            try systemCall("rename into place", path) { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
        if durable { syncDirectory() }
        timings.renameAndFolderFsync = MonotonicClock.now() - mark
    }

    /// Makes the rename itself durable.
    private func syncDirectory() {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Moves a corrupt file to `<name>.corrupt-<timestamp>` beside it and returns the new path.
    private func moveAside() throws -> String {
        let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false).timeSeparator(.omitted).dateSeparator(.omitted))
        var target = "\(path).corrupt-\(stamp)"
        var suffix = 1
        while access(target, F_OK) == 0 { suffix += 1; target = "\(path).corrupt-\(stamp)-\(suffix)" }
        try systemCall("move the corrupt file aside", path) { rename(path, target) }
        return target
    }

    /// Removes temporaries left by writers that died mid-write. Safe under the
    /// lock: a live writer holds the lock for as long as its temporary exists.
    private func sweepTemporaries() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let prefix = ".\(fileName).tmp."
        for name in names where name.hasPrefix(prefix) { unlink(directory + "/" + name) }
    }
}

/// Errors of shared files beyond system-call failures.
public enum SharedFileError: Error, CustomStringConvertible, Equatable {
    case corrupt(path: String, reason: String)

    public var description: String {
        switch self {
        case .corrupt(let path, let reason):
            "'\(path)' is not a valid property-list dictionary: \(reason). It is left untouched; "
                + "the next write moves it aside (to '\((path as NSString).lastPathComponent).corrupt-…') and starts the domain empty."
        }
    }
}
