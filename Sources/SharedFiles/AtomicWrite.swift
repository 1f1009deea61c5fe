import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes `bytes` to `name` in the folder open at `folder` so that readers see
/// the old file or the new one, never a torn one: a temporary file, fsync,
/// rename over the name, fsync of the folder. Without a lock, the temporary's
/// name carries the process id, so two writers never share one.
package func writeFileAtomically(_ bytes: Data, named name: String, in folder: Int32, folderPath: String, durable: Bool = true) throws {
    let temporary = ".\(name).tmp.\(getpid())"
    try writeTemporaryFile(bytes, named: temporary, in: folder, folderPath: folderPath, durable: durable)
    try moveIntoPlace(temporary, as: name, in: folder, folderPath: folderPath, durable: durable)
}

/// Creates the file `name` in the folder open at `folder` holding `bytes`
/// (fsync'd when `durable`). The create is exclusive (O_EXCL: no link is
/// followed, no FIFO opened); a file left under that name (by a writer that
/// died) is removed and the create made again. Nothing is left behind on
/// failure. Returns the new file's status once written (its inode is the
/// temporary's identity).
@discardableResult
func writeTemporaryFile(_ bytes: some ContiguousBytes, named name: String, in folder: Int32, folderPath: String, durable: Bool, stamped: Bool = false)
    throws -> stat
{
    let path = folderPath + "/" + name
    let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW
    var fd = openat(folder, name, flags, 0o600)
    if fd == -1 && errno == EEXIST {
        // A temporary left by a writer that died (callers hold the file's lock): replaced.
        if unlinkat(folder, name, 0) == -1 && errno != ENOENT {
            throw SharedFileError.systemCall(operation: "remove the stale temporary file", path: path, errno: errno)
        }
        fd = openat(folder, name, flags, 0o600)
    }
    if fd == -1 {
        let code = errno
        // The folder was removed after it was opened (a device erased).
        if code == ENOENT { throw SharedFileError.folderRemoved(operation: "create the temporary file", path: path, errno: code) }
        throw SharedFileError.systemCall(operation: "create the temporary file", path: path, errno: code)
    }
    do {
        var open = true
        defer { if open { close(fd) } }
        try bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let count = try systemCall("write", path) { Int32(write(fd, raw.baseAddress! + written, raw.count - written)) }
                written += Int(count)
            }
        }
        var info = stat()
        try systemCall("inspect", path) { fstat(fd, &info) }
        if stamped { CommitStamp.mark(fd, written: info) }
        if durable { try systemCall("fsync", path) { fsync(fd) } }
        open = false
        // Not retried on EINTR: on Linux the descriptor is gone either way.
        if close(fd) == -1 && errno != EINTR { throw SharedFileError.systemCall(operation: "close", path: path, errno: errno) }
        return info
    } catch {
        unlinkat(folder, name, 0)
        throw error
    }
}

/// Renames `temporary` over `name` in the folder open at `folder`, then (when
/// `durable`) fsyncs the folder so the rename itself survives a crash; a
/// failing fsync is an error, as the commit may then be lost.
func moveIntoPlace(_ temporary: String, as name: String, in folder: Int32, folderPath: String, durable: Bool) throws {
    do {
        try systemCall("rename into place", folderPath + "/" + name) { renameat(folder, temporary, folder, name) }
    } catch {
        unlinkat(folder, temporary, 0)
        throw error
    }
    if durable { try systemCall("fsync the folder", folderPath) { fsync(folder) } }
}

/// Puts `temporary` (in the folder open at `scratch`) in place of `name`
/// (in `folder`, on the same file system) without fsync, for a writer
/// holding the file's lock: the two are swapped (`renameat2` with
/// `RENAME_EXCHANGE`), so `name` never goes missing, and then the old file,
/// now under the temporary's name, is unlinked. A plain rename over an
/// existing file makes ext4 start writing the new file back at once
/// (`auto_da_alloc`, its guard for programs that skip fsync); an exchange
/// does not. A writer killed between the two steps leaves the old file as
/// the temporary, which the next writer replaces as it would any. Where
/// there is nothing to exchange with, or the file system refuses the flag,
/// it is a plain rename.
func exchangeIntoPlace(_ temporary: String, in scratch: Int32, as name: String, in folder: Int32, folderPath: String) throws {
    var result: Int32 = -1
    if let exchange = RenameExchange.call {
        repeat { result = exchange(scratch, temporary, folder, name, RenameExchange.flag) } while result == -1 && errno == EINTR
        if result == 0 {
            // Best effort: a temporary left behind holds the old file and is replaced by the next writer.
            unlinkat(scratch, temporary, 0)
            return
        }
    }
    let code = RenameExchange.call == nil ? ENOSYS : errno
    switch code {
    case ENOENT, EINVAL, ENOSYS, ENOTSUP, EPERM:
        // No file yet at `name`, or the file system cannot exchange.
        try systemCall("rename into place", folderPath + "/" + name) { renameat(scratch, temporary, folder, name) }
    default:
        // The caller removes the temporary.
        throw SharedFileError.systemCall(operation: "exchange into place", path: folderPath + "/" + name, errno: code)
    }
}

/// glibc's `renameat2`, which Glibc's Swift module leaves out: found by name, with C's calling convention.
enum RenameExchange {
    typealias Call = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    static let call = dlsym(nil, "renameat2").map { unsafeBitCast($0, to: Call.self) }
    /// `RENAME_EXCHANGE` from <linux/fs.h>.
    static let flag: UInt32 = 1 << 1
}
