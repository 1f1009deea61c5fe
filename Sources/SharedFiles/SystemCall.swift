import Foundation
import PropertyList

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs a system call, retrying on EINTR, and turns -1 into a `SharedFileError.systemCall`.
@discardableResult
func systemCall(_ operation: String, _ path: String, _ call: () -> Int32) throws -> Int32 {
    while true {
        let result = call()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SharedFileError.systemCall(operation: operation, path: path, errno: code)
    }
}

/// Creates `path` and any missing parents with mode 0700. Existing folders are kept as they are.
package func createDirectories(_ path: String) throws {
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        prefix += "/" + component
        if mkdir(prefix, 0o700) == 0 { continue }
        let code = errno
        if code == EEXIST {
            var info = stat()
            if stat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { continue }
            throw SharedFileError.systemCall(operation: "create the folder", path: prefix, errno: ENOTDIR)
        }
        throw SharedFileError.systemCall(operation: "create the folder", path: prefix, errno: code)
    }
}

/// Reads a whole regular file by path; nil if it does not exist. See `readRegularFile`.
package func readWholeFile(_ path: String, limit: Int = PlistLimits.maximumFileSize) throws -> [UInt8]? {
    try readRegularFile(named: path, in: AT_FDCWD, path: path, limit: limit)
}

/// Reads a file a person named on a command line or in a scenario (a
/// manifest, a scenario, a plist to import): symbolic links are followed,
/// as a person expects, but only a regular file of at most `limit` bytes is
/// read, so naming a FIFO or a device (`/dev/zero`) is an error, never a hang.
package func readNamedFile(_ path: String, limit: Int = PlistLimits.maximumFileSize) throws -> [UInt8] {
    guard let resolved = realpath(path, nil) else { throw SharedFileError.systemCall(operation: "open", path: path, errno: errno) }
    defer { free(resolved) }
    guard let bytes = try readWholeFile(String(cString: resolved), limit: limit) else {
        throw SharedFileError.systemCall(operation: "open", path: path, errno: ENOENT)
    }
    return bytes
}

/// Reads the file `name` in the folder open at `folder` whole; nil if it does
/// not exist. Refused, without blocking and without reading a byte: a
/// symbolic link, anything but a regular file (a FIFO would block the open
/// and every read until a writer comes), and a file larger than `limit`
/// (which would make the reader take that much memory). `path` names the
/// file in messages. `onceRead` is given the descriptor after the last byte
/// was read, before it is closed.
package func readRegularFile(
    named name: String, in folder: Int32, path: String, limit: Int = PlistLimits.maximumFileSize, onceRead: (Int32) -> Void = { _ in }
) throws -> [UInt8]? {
    let fd = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    if fd == -1 {
        let code = errno
        if code == ENOENT { return nil }
        if code == ELOOP || code == ENXIO {
            // A link, or a socket (which cannot be opened): name what it is.
            var info = stat()
            if fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                throw SharedFileError.notARegularFile(path: path, kind: describeFileType(info.st_mode))
            }
        }
        throw SharedFileError.systemCall(operation: "open", path: path, errno: code)
    }
    defer { close(fd) }
    var info = stat()
    try systemCall("inspect", path) { fstat(fd, &info) }
    guard info.st_mode & S_IFMT == S_IFREG else {
        throw SharedFileError.notARegularFile(path: path, kind: describeFileType(info.st_mode))
    }
    guard info.st_size <= Int64(limit) else { throw SharedFileError.fileTooLarge(path: path, size: Int64(info.st_size), limit: limit) }
    // A regular file: reads do not block, so O_NONBLOCK (which kept the open
    // from waiting on a FIFO put at the name) is left set; a file system
    // that still answers EAGAIN gets it cleared, and the read is tried again.
    var blockingSet = false
    // One byte more than the size, so a file that did not grow is read (and
    // its end seen) in one go; one that grows is read up to the limit only.
    var buffer = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
    var filled = 0
    while true {
        if filled == buffer.count {
            guard filled <= limit else { throw SharedFileError.fileTooLarge(path: path, size: Int64(filled), limit: limit) }
            buffer.append(contentsOf: repeatElement(0, count: min(buffer.count, limit + 1 - filled)))
        }
        let count = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + filled, raw.count - filled) }
        if count == -1 {
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN && !blockingSet {
                let flags = try systemCall("inspect", path) { fcntl(fd, F_GETFL) }
                try systemCall("prepare to read", path) { fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
                blockingSet = true
                continue
            }
            throw SharedFileError.systemCall(operation: "read", path: path, errno: code)
        }
        if count == 0 { break }
        filled += Int(count)
    }
    buffer.removeSubrange(filled...)
    onceRead(fd)
    return buffer
}

/// "a FIFO (named pipe)", "a folder"…, for messages about what was found where a file or folder belongs.
package func describeFileType(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFREG: "a regular file"
    case S_IFDIR: "a folder"
    case S_IFLNK: "a symbolic link"
    case S_IFIFO: "a FIFO (named pipe)"
    case S_IFSOCK: "a socket"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    default: "a file of unknown type"
    }
}

/// The running executable's own path, links resolved (from /proc/self/exe),
/// so a program found through PATH or a symlink finds its sibling programs.
/// nil when /proc/self/exe cannot be read.
package func ownExecutablePath() -> String? {
    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
}
