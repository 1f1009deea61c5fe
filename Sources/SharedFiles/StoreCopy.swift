import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// cfprefsd's copy of a domain, on a device that reads through its cache
/// (macOS): the bytes of the store's last commit, kept in the scratch folder
/// as `.<name>.store-copy` behind a first line with that commit's
/// `CommitStamp`. A writer that finds the file changed by something other
/// than the store starts from it, as cfprefsd saves the domain it holds
/// over a hand edit. Nothing else reads it.
enum StoreCopy {
    static func name(for fileName: String) -> String { "." + fileName + ".store-copy" }

    /// Keeps `bytes`, about to be put in place as a file written with the status `written`.
    /// Written before the exchange, so a copy is never older than the store's last commit.
    static func keep(_ bytes: [UInt8], written: stat, fileName: String, in scratch: Int32, scratchPath: String) throws {
        let copy = Array((CommitStamp.value(of: written) + "\n").utf8) + bytes
        try writeTemporaryFile(copy, named: name(for: fileName), in: scratch, folderPath: scratchPath, durable: false)
    }

    /// The copy's bytes when the file at `fileName` in `folder` was changed by something other than the
    /// store and the copy is of the store's last commit of it: nil when the store wrote the file, when
    /// there is no copy, and when the file's mark (kept by an edit in place) names a later commit than
    /// the copy's (one made while the device read without the cache, which keeps no copy).
    static func bytesInstead(ofFile fileName: String, in folder: Int32, scratch: Int32, limit: Int) -> [UInt8]? {
        let file = openat(folder, fileName, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard file >= 0 else { return nil }
        defer { close(file) }
        guard CommitStamp.writer(ofOpen: file) == .foreign else { return nil }
        let path = name(for: fileName)
        guard let stored = try? readRegularFile(named: path, in: scratch, path: path, limit: limit + 64),
            let newline = stored.firstIndex(of: UInt8(ascii: "\n"))
        else { return nil }
        if case .some(let mark) = CommitStamp.recorded(ofOpen: file), mark != String(decoding: stored[..<newline], as: UTF8.self) {
            return nil
        }
        return Array(stored[(newline + 1)...])
    }

    /// Forgets the copy (the file is deleted or set aside: cfprefsd holds nothing of it any more).
    static func remove(fileName: String, in scratch: Int32) {
        unlinkat(scratch, name(for: fileName), 0)
    }
}
