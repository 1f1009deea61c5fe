#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: which operation, on which path, and errno.
public struct FileSystemError: Error, CustomStringConvertible, Equatable {
    public let operation: String
    public let path: String
    public let errno: Int32

    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String {
        var text = "Unable to \(operation) '\(path)': \(String(cString: strerror(errno)))"
        switch errno {
        case EACCES, EPERM: text += " (check the permissions of the simulation root)"
        case ELOOP: text += " (a symbolic link here is not followed; replace it with a real file or folder)"
        case ENOSPC: text += " (the disk is full)"
        default: break
        }
        return text
    }
}

/// Runs a system call, retrying on EINTR, and turns -1 into a `FileSystemError`.
@discardableResult
public func systemCall(_ operation: String, _ path: String, _ call: () -> Int32) throws -> Int32 {
    while true {
        let result = call()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw FileSystemError(operation: operation, path: path, errno: code)
    }
}

/// Creates `path` and any missing parents with mode 0700. Existing folders are kept as they are.
public func createDirectories(_ path: String) throws {
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        prefix += "/" + component
        if mkdir(prefix, 0o700) == 0 { continue }
        let code = errno
        if code == EEXIST {
            var info = stat()
            if stat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { continue }
            throw FileSystemError(operation: "create the folder", path: prefix, errno: ENOTDIR)
        }
        throw FileSystemError(operation: "create the folder", path: prefix, errno: code)
    }
}

/// Reads a whole file. Returns nil if it does not exist. Symbolic links are refused.
public func readWholeFile(_ path: String) throws -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    if fd == -1 {
        if errno == ENOENT { return nil }
        throw FileSystemError(operation: "open", path: path, errno: errno)
    }
    defer { close(fd) }
    var info = stat()
    try systemCall("inspect", path) { fstat(fd, &info) }
    guard info.st_mode & S_IFMT == S_IFREG else {
        throw FileSystemError(operation: "read", path: path, errno: EISDIR)
    }
    // One byte more than the size, so a file that did not grow is read (and its end seen) in one go.
    var buffer = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
    var filled = 0
    while true {
        if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
        let count = try buffer.withUnsafeMutableBytes { raw in
            try systemCall("read", path) { Int32(read(fd, raw.baseAddress! + filled, raw.count - filled)) }
        }
        if count == 0 { break }
        filled += Int(count)
    }
    buffer.removeSubrange(filled...)
    return buffer
}
