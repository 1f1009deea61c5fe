import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The file an update just put in place, held open. While it is held, its
/// inode cannot become another file's, so finding that inode at the path,
/// with the size and times it had when put there, proves the file is still
/// exactly what was written: a reload of the process's own last commit can
/// be skipped. (An edit in place within the same clock tick and of the same
/// size would look unchanged; inotify reports that as a write, and the
/// watcher then asks for a real read: `PersistentDomain.scheduleReload`.)
/// Owned by one domain, closed when a newer one replaces it.
package final class InstalledFile: Sendable {
    private let descriptor: Int32
    private let identity: Identity

    /// What must not change: which inode, and its size and times.
    private struct Identity: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var modifiedNanoseconds: Int64
        var changed: Int64
        var changedNanoseconds: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
            changed = Int64(info.st_ctim.tv_sec)
            changedNanoseconds = Int64(info.st_ctim.tv_nsec)
        }
    }

    /// How many are held in this process at once: each costs a descriptor,
    /// and a process with very many domains must not run out of them.
    package static let limit = 64
    private static let held = Atomic<Int>(0)

    /// Opens `name` in `folder` (just renamed there, under the file's lock);
    /// nil when it cannot be held (the limit, or the open failed): reloads
    /// then read the file, as they always may.
    init?(named name: String, in folder: Int32) {
        guard Self.held.add(1, ordering: .relaxed).newValue <= Self.limit else {
            Self.held.subtract(1, ordering: .relaxed)
            return nil
        }
        let opened = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        var info = stat()
        guard opened >= 0, fstat(opened, &info) == 0 else {
            if opened >= 0 { close(opened) }
            Self.held.subtract(1, ordering: .relaxed)
            return nil
        }
        descriptor = opened
        identity = Identity(info)
    }

    deinit {
        close(descriptor)
        Self.held.subtract(1, ordering: .relaxed)
    }

    /// Whether the file at `path` is still this one, unchanged since it was put there.
    package func isStill(at path: String) -> Bool {
        var atPath = stat()
        var held = stat()
        guard lstat(path, &atPath) == 0, fstat(descriptor, &held) == 0 else { return false }
        return Identity(atPath) == identity && Identity(held) == identity
    }
}
