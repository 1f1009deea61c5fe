import CLinuxCalls
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A folder below a top folder (the simulation root), reached afresh for
/// every operation by walking down from the top one name at a time with
/// `O_NOFOLLOW`: a symbolic link anywhere below the top is refused, even a
/// folder swapped for a link while a process runs, so no operation can be
/// led outside the top. The caller then creates, locks, renames and unlinks
/// relative to the folder's descriptor.
///
/// The descriptor lives for one operation only: a folder held open would
/// delay inotify's IN_DELETE_SELF (a device erased) until it is closed, and
/// change watchers would miss that the folder went.
package struct ConfinedFolder: Sendable {
    /// The folder's path as given (for messages).
    package let path: String
    /// The top folder as given; links in it are the caller's choice and followed.
    package let top: String
    /// The top with its links resolved, once.
    private let resolvedTop: String
    /// The folder names from the top down to this folder.
    let components: [String]
    /// `components` joined by "/", for opening the folder in one call.
    private let relativePath: String

    /// `path` must be `top` or lie below it, compared name by name as written
    /// (no link is resolved here: the walk checks every folder below the top).
    /// `top` should exist (see `createDirectories`); if not, it is used as written.
    package init(_ path: String, top: String) throws {
        let folder = Self.names(path)
        let topFolder = Self.names(top)
        guard folder.starts(with: topFolder), !folder.contains(".."), path.hasPrefix("/") == top.hasPrefix("/") else {
            throw SharedFileError.outsideTop(path: path, top: top)
        }
        components = Array(folder.dropFirst(topFolder.count))
        relativePath = components.joined(separator: "/")
        self.path = path
        self.top = top
        resolvedTop = Self.resolve(top) ?? top
    }

    /// The names of a path, without empty ones and ".".
    private static func names(_ path: String) -> [String] {
        path.split(separator: "/").map(String.init).filter { $0 != "." }
    }

    private static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Runs `body` with the folder open (`O_RDONLY | O_DIRECTORY`) and closes
    /// it after. Missing folders on the way are created (0700) when
    /// `creating`; otherwise a missing folder gives nil and `body` is not run.
    package func withDescriptor<T>(creating: Bool, _ body: (Int32) throws -> T) throws -> T? {
        guard let descriptor = try open(creating: creating) else { return nil }
        defer { close(descriptor) }
        return try body(descriptor)
    }

    /// Opens the folder; the caller closes the descriptor. See `withDescriptor`.
    package func open(creating: Bool) throws -> Int32? {
        var current = Glibc.open(resolvedTop, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if current == -1 && errno == ENOENT && creating {
            // The whole root went (removed by hand): it is the caller's folder, make it again.
            try createDirectories(resolvedTop)
            current = Glibc.open(resolvedTop, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        if current == -1 {
            if errno == ENOENT { return nil }
            throw SharedFileError.systemCall(operation: "open the folder", path: top, errno: errno)
        }
        if !components.isEmpty {
            // The same walk in one system call (no link followed, nothing
            // outside the top); whatever it refuses or misses, the walk
            // below says what stands where, or makes what is missing.
            let folder = CLinuxCalls_openFolderBeneath(current, relativePath)
            if folder >= 0 {
                close(current)
                return folder
            }
        }
        var walked = top
        for name in components {
            walked += "/" + name
            do {
                guard let next = try openChild(name, of: current, path: walked, creating: creating) else {
                    close(current)
                    return nil
                }
                close(current)
                current = next
            } catch {
                close(current)
                throw error
            }
        }
        return current
    }

    private func openChild(_ name: String, of parent: Int32, path: String, creating: Bool) throws -> Int32? {
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        var child = openat(parent, name, flags)
        if child == -1 && errno == ENOENT {
            guard creating else { return nil }
            if mkdirat(parent, name, 0o700) == -1 && errno != EEXIST {
                throw SharedFileError.systemCall(operation: "create the folder", path: path, errno: errno)
            }
            child = openat(parent, name, flags)
        }
        guard child == -1 else { return child }
        let code = errno
        if code == ENOENT && !creating { return nil }
        if code == ELOOP || code == ENOTDIR {
            // Say what stands there instead of a folder.
            var info = stat()
            if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                if info.st_mode & S_IFMT == S_IFLNK { throw SharedFileError.symbolicLink(path: path) }
                throw SharedFileError.notAFolder(path: path, kind: describeFileType(info.st_mode))
            }
        }
        throw SharedFileError.systemCall(operation: "open the folder", path: path, errno: code)
    }
}
