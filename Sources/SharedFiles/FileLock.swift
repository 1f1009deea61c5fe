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
/// file is opened in a folder descriptor the caller opened for this one
/// operation, and only while locked: a descriptor held open would pin its
/// folder, and a deleted folder (a device erased) would then never be
/// reported gone to inotify watchers. The kernel releases the lock if the
/// process dies.
public final class FileLock: @unchecked Sendable {
    /// The lock file's name in its folder.
    public let name: String
    private let threadMutex = NSLock()

    public init(name: String) {
        self.name = name
    }

    /// Creates the lock file in `folder` if missing (to fail early, with the path).
    func create(in folder: Int32, path: String) throws {
        _ = Glibc.close(try open(in: folder, path: path))
    }

    /// Runs `body` holding the lock. `path` names the lock file in messages.
    func withLock<T>(in folder: Int32, path: String, _ body: () throws -> T) throws -> T {
        threadMutex.lock()
        defer { threadMutex.unlock() }
        let descriptor = try acquire(in: folder, path: path)
        defer { _ = Glibc.close(descriptor) }  // closing releases the flock
        return try body()
    }

    /// Read-only is enough for flock, and its close wakes no watcher (no
    /// IN_CLOSE_WRITE). O_NONBLOCK: a FIFO planted in its place must not block the open.
    private func open(in folder: Int32, path: String) throws -> Int32 {
        let descriptor = openat(folder, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        if descriptor == -1 {
            let code = errno
            // The folder was removed after it was opened (a device erased): the caller starts over.
            if code == ENOENT { throw FolderRemoved(error: FileSystemError(operation: "open the lock file", path: path, errno: code)) }
            if code == ELOOP { throw SharedFileError.notARegularFile(path: path, kind: "a symbolic link") }
            throw FileSystemError(operation: "open the lock file", path: path, errno: code)
        }
        var info = stat()
        do {
            try systemCall("inspect the lock file", path) { fstat(descriptor, &info) }
            guard info.st_mode & S_IFMT == S_IFREG else { throw SharedFileError.notARegularFile(path: path, kind: describeFileType(info.st_mode)) }
        } catch {
            _ = Glibc.close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Locks, then checks that the name still denotes the locked inode: if the
    /// file was deleted meanwhile, others would lock a new one, so retry.
    private func acquire(in folder: Int32, path: String) throws -> Int32 {
        while true {
            let descriptor = try open(in: folder, path: path)
            do {
                try systemCall("lock", path) { flock(descriptor, LOCK_EX) }
                var held = stat(), current = stat()
                try systemCall("inspect the lock file", path) { fstat(descriptor, &held) }
                if fstatat(folder, name, &current, AT_SYMLINK_NOFOLLOW) == 0 {
                    if current.st_ino == held.st_ino && current.st_dev == held.st_dev { return descriptor }
                } else if errno != ENOENT {
                    throw FileSystemError(operation: "inspect the lock file", path: path, errno: errno)
                }
            } catch {
                _ = Glibc.close(descriptor)
                throw error
            }
            _ = Glibc.close(descriptor)
        }
    }
}

/// Thrown when the folder an operation opened was removed under it; the
/// operation starts over from the top (creating the folder again).
struct FolderRemoved: Error {
    let error: FileSystemError
}
