import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` held for a process's whole life: it says whether the
/// process runs and which pid it is, and keeps a second one from starting
/// (the cloud of a root, the sync agent of a device). The kernel releases it
/// when the process ends, however it ends, so it never goes stale.
package final class LifetimeLock: Sendable {
    package let path: String
    /// Open for the life of this object (and so of the process that keeps it).
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Takes the lock at `path` (created 0600 below `root`, through real
    /// folders only). If another process holds it, waits up to `patience`
    /// seconds (a process that is just starting or ending) and then returns
    /// nil; `holder(of:)` says who it is.
    package static func acquire(_ path: String, root: String, patience: Double = 1) throws -> LifetimeLock? {
        let (folder, name) = try place(path, root: root)
        let descriptor = try folder.withDescriptor(creating: true) { directory -> Int32 in
            let opened = openat(directory, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard opened >= 0 else { throw SharedFileError.systemCall(operation: "open the lock file", path: path, errno: errno) }
            return opened
        }
        guard let descriptor else { throw SharedFileError.systemCall(operation: "open the folder of", path: path, errno: ENOENT) }
        let deadline = MonotonicClock.now() + UInt64(max(0, patience) * 1e9)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            guard error == EWOULDBLOCK || error == EINTR else {
                close(descriptor)
                throw SharedFileError.systemCall(operation: "lock", path: path, errno: error)
            }
            if MonotonicClock.now() >= deadline {
                close(descriptor)
                return nil
            }
            usleep(10_000)
        }
        return LifetimeLock(path: path, descriptor: descriptor)
    }

    /// The process holding the lock at `path`, if any (nil also when there is no such file).
    package static func holder(of path: String, root: String) -> LockHolder? {
        guard let (folder, name) = try? place(path, root: root) else { return nil }
        let found = try? folder.withDescriptor(creating: false) { directory -> LockHolder? in
            let descriptor = openat(directory, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            return LockHolder.find(lockedFile: descriptor)
        }
        return found ?? nil
    }

    private static func place(_ path: String, root: String) throws -> (ConfinedFolder, String) {
        let directory = (path as NSString).deletingLastPathComponent
        return (try ConfinedFolder(directory, top: root), (path as NSString).lastPathComponent)
    }
}
