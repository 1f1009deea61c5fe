import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock shared by threads and processes, held on a lock file
/// that is never renamed (locking the data file itself fails once a rename
/// replaces its inode).
///
/// `flock` excludes other processes but not other threads using the same
/// descriptor, so a mutex serializes this process's threads first. The lock
/// file is open only while locked: a descriptor held open would pin its
/// folder, and a deleted folder (a device erased) would then never be
/// reported gone to inotify watchers. The kernel releases the lock if the
/// process dies.
public final class FileLock: @unchecked Sendable {
    public let path: String
    private let threadMutex = NSLock()
    /// Creates the lock file's folder again if it vanished (see SharedPlistFile).
    private let prepareDirectory: @Sendable (String) throws -> Void

    public init(path: String, prepareDirectory: @escaping @Sendable (String) throws -> Void = createDirectories) throws {
        self.path = path
        self.prepareDirectory = prepareDirectory
        // Fail early, with the path, if the lock file cannot be created.
        try close(open())
    }

    private func open() throws -> Int32 {
        // Read-only is enough for flock, and its close wakes no watcher (no IN_CLOSE_WRITE).
        var descriptor = Glibc.open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor == -1 && errno == ENOENT {
            // The folder vanished (a device erased): recreate it.
            try prepareDirectory((path as NSString).deletingLastPathComponent)
            descriptor = Glibc.open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        }
        if descriptor == -1 { throw FileSystemError(operation: "open the lock file", path: path, errno: errno) }
        return descriptor
    }

    private func close(_ descriptor: Int32) { _ = Glibc.close(descriptor) }

    /// Runs `body` holding the lock.
    public func withLock<T>(_ body: () throws -> T) throws -> T {
        threadMutex.lock()
        defer { threadMutex.unlock() }
        let descriptor = try acquire()
        defer { close(descriptor) }  // closing releases the flock
        return try body()
    }

    /// Locks, then checks that the path still names the locked inode: if the
    /// file was deleted meanwhile, others would lock a new one, so retry.
    private func acquire() throws -> Int32 {
        while true {
            let descriptor = try open()
            do {
                try systemCall("lock", path) { flock(descriptor, LOCK_EX) }
            } catch {
                close(descriptor)
                throw error
            }
            var held = stat(), current = stat()
            fstat(descriptor, &held)
            if stat(path, &current) == 0, current.st_ino == held.st_ino, current.st_dev == held.st_dev { return descriptor }
            close(descriptor)
        }
    }
}
