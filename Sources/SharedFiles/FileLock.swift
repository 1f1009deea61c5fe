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
/// is released by the kernel if the process dies.
public final class FileLock: @unchecked Sendable {
    public let path: String
    private let threadMutex = NSLock()
    /// Owned here; reopened if the lock file was deleted (a device erased).
    private var descriptor: Int32

    public init(path: String) throws {
        self.path = path
        descriptor = try Self.openLockFile(path)
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    private static func openLockFile(_ path: String) throws -> Int32 {
        try systemCall("open the lock file", path) { open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600) }
    }

    /// Runs `body` holding the lock.
    public func withLock<T>(_ body: () throws -> T) throws -> T {
        threadMutex.lock()
        defer { threadMutex.unlock() }
        try acquire()
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// Locks, then checks that the path still names the locked inode: if the
    /// file was deleted meanwhile, others would lock a new one, so reopen.
    private func acquire() throws {
        while true {
            if descriptor < 0 {
                try createDirectories((path as NSString).deletingLastPathComponent)
                descriptor = try Self.openLockFile(path)
            }
            try systemCall("lock", path) { flock(descriptor, LOCK_EX) }
            var held = stat(), current = stat()
            fstat(descriptor, &held)
            if stat(path, &current) == 0, current.st_ino == held.st_ino, current.st_dev == held.st_dev { return }
            flock(descriptor, LOCK_UN)
            close(descriptor)
            descriptor = -1
        }
    }
}
