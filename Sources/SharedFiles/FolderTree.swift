import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Listing and deleting folders through descriptors, never following a
/// symbolic link: a link is removed itself, never what it points to, and
/// folders are entered only with `O_NOFOLLOW`, so a link planted anywhere in a
/// tree (or swapped in during the walk) cannot lead a removal outside it.
package enum FolderTree {
    /// Folders nested deeper than this are refused (each level holds a descriptor).
    package static let maximumDepth = 128
    /// How many times a folder that filled again while it was emptied is
    /// emptied again before the removal gives up: processes go on running
    /// through a device's erase, and one may write a file into a folder
    /// between its last entry's removal and the folder's own.
    static let maximumRefills = 100

    /// Removes the entry `name` of the folder open at `folder`, and everything
    /// inside it if it is a folder. Returns false if there was no such entry.
    /// `path` names the entry in messages.
    @discardableResult
    package static func remove(_ name: [CChar], in folder: Int32, path: String) throws -> Bool {
        try remove(name, in: folder, path: path, depth: 0)
    }

    @discardableResult
    package static func remove(_ name: String, in folder: Int32, path: String) throws -> Bool {
        try remove(Array(name.utf8CString), in: folder, path: path, depth: 0)
    }

    /// Removes every entry of the folder open at `folder` but those named in `keeping`.
    package static func removeContents(of folder: Int32, path: String, keeping: Set<String> = []) throws {
        try removeContents(of: folder, path: path, keeping: keeping, depth: 0)
    }

    /// The names in the folder open at `folder` (without `.` and `..`), as raw
    /// bytes: a name that is not UTF-8 must still be removable.
    package static func entries(of folder: Int32, path: String) throws -> [[CChar]] {
        // fdopendir takes the descriptor over; give it a copy.
        let copy = dup(folder)
        guard copy >= 0 else { throw SharedFileError.systemCall(operation: "list", path: path, errno: errno) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            close(copy)
            throw SharedFileError.systemCall(operation: "list", path: path, errno: code)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [[CChar]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                Array(raw.bindMemory(to: CChar.self).prefix { $0 != 0 }) + [0]
            }
            if name == [46, 0] || name == [46, 46, 0] { continue }  // "." and ".."
            names.append(name)
        }
        return names
    }

    package static func displayName(_ name: [CChar]) -> String {
        String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func remove(_ name: [CChar], in folder: Int32, path: String, depth: Int) throws -> Bool {
        // Anything but a folder (a link included) goes with one unlink.
        var refills = 0
        while true {
            if unlinkat(folder, name, 0) == 0 { return true }
            var code = errno
            if code == ENOENT { return false }
            guard code == EISDIR || code == EPERM else { throw SharedFileError.systemCall(operation: "delete", path: path, errno: code) }
            guard depth < maximumDepth else { throw SharedFileError.nestedTooDeep(path: path, limit: maximumDepth) }
            let child = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if child == -1 {
                code = errno
                if code == ENOENT { return false }
                // Replaced by a link or a file since the unlink: unlink that instead.
                if code == ELOOP || code == ENOTDIR { continue }
                throw SharedFileError.systemCall(operation: "open the folder", path: path, errno: code)
            }
            do {
                defer { close(child) }
                try removeContents(of: child, path: path, keeping: [], depth: depth + 1)
            }
            if unlinkat(folder, name, AT_REMOVEDIR) == 0 { return true }
            code = errno
            if code == ENOENT { return true }
            guard code == ENOTEMPTY else { throw SharedFileError.systemCall(operation: "delete the folder", path: path, errno: code) }
            refills += 1
            if refills > maximumRefills {
                throw SharedFileError.systemCall(
                    operation: "delete the folder (a running process kept writing into it; stop it and try again)", path: path, errno: code)
            }
        }
    }

    private static func removeContents(of folder: Int32, path: String, keeping: Set<String>, depth: Int) throws {
        for name in try entries(of: folder, path: path) {
            let shown = displayName(name)
            if keeping.contains(shown) { continue }
            _ = try remove(name, in: folder, path: path + "/" + shown, depth: depth)
        }
    }
}
