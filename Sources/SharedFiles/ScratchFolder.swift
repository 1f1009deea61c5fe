import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where commits write their temporaries (and durable commits their
/// journals): a folder beside the files, so that writing one wakes no
/// process watching the files' folder (inotify does not see into
/// sub-folders); only the exchange does.
enum ScratchFolder {
    static let name = ".groupsim-scratch"
    private static let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    /// Opens the scratch folder in `folder`, made (0700) if missing; never
    /// through a link. `durable`: a folder made here is on disk (the
    /// folder's fsync'd) before it is used.
    static func open(in folder: Int32, folderPath: String, durable: Bool) throws -> Int32 {
        var descriptor = openat(folder, name, flags)
        if descriptor == -1 && errno == ENOENT {
            if mkdirat(folder, name, 0o700) == -1 {
                if errno != EEXIST { throw SharedFileError.systemCall(operation: "create the folder", path: folderPath + "/" + name, errno: errno) }
            } else if durable {
                try systemCall("fsync the folder", folderPath) { fsync(folder) }
            }
            descriptor = openat(folder, name, flags)
        }
        if descriptor == -1 {
            let code = errno
            if code == ENOENT {
                throw SharedFileError.folderRemoved(operation: "open the folder", path: folderPath + "/" + name, errno: code)
            }
            throw SharedFileError.systemCall(operation: "open the folder", path: folderPath + "/" + name, errno: code)
        }
        return descriptor
    }

    /// The scratch folder in `folder`, if there is one (nothing is made).
    static func openIfPresent(in folder: Int32) -> Int32? {
        let descriptor = openat(folder, name, flags)
        return descriptor >= 0 ? descriptor : nil
    }
}
