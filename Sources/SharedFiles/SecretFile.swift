import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A secret kept in a file inside the simulation root (a device's, the
/// cloud's control secret): 32 random bytes as 64 hexadecimal digits, in a
/// regular file of mode 0600 owned by this user, reached from the root
/// through real folders only. Whoever may read the root may read it; nobody
/// else, and no link can lead a reader to a secret outside the root.
package struct SecretFile: Sendable {
    package let folder: ConfinedFolder
    package let name: String

    package init(folder: ConfinedFolder, name: String) {
        self.folder = folder
        self.name = name
    }

    package var path: String { folder.path + "/" + name }

    static let hexDigits = 64

    /// The secret, or nil when there is no file (nor folder). A file that is
    /// not a private regular file of this user, or does not hold a secret, is an error naming it.
    package func read() throws -> String? {
        try folder.withDescriptor(creating: false) { try read(in: $0) } ?? nil
    }

    /// The secret, created (atomically, 0600) when there is none yet. Two
    /// processes creating it at once agree: the second reads the first's.
    package func readOrCreate() throws -> String {
        guard
            let secret = try folder.withDescriptor(
                creating: true,
                { descriptor -> String in
                    if let existing = try read(in: descriptor) { return existing }
                    var generator = SystemRandomNumberGenerator()
                    let secret = (0..<Self.hexDigits / 2).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
                    // Unique per attempt: two threads of one process may make it at once too.
                    let temporary = ".\(name).tmp.\(getpid()).\(UInt32.random(in: 0...UInt32.max, using: &generator))"
                    try writeTemporaryFile(Data((secret + "\n").utf8), named: temporary, in: descriptor, folderPath: folder.path, durable: true)
                    defer { unlinkat(descriptor, temporary, 0) }
                    // link, not rename: a secret another process made meanwhile is kept, never replaced.
                    if linkat(descriptor, temporary, descriptor, name, 0) == -1 {
                        guard errno == EEXIST, let theirs = try read(in: descriptor) else {
                            throw SharedFileError.systemCall(operation: "create the secret", path: path, errno: errno)
                        }
                        return theirs
                    }
                    try systemCall("fsync the folder", folder.path) { fsync(descriptor) }
                    return secret
                })
        else {
            throw SharedFileError.systemCall(operation: "open the folder of the secret", path: folder.path, errno: ENOENT)
        }
        return secret
    }

    /// Whether `text` is a secret as these files hold one (64 lowercase hexadecimal digits).
    package static func isSecret(_ text: String) -> Bool {
        text.utf8.count == hexDigits && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Puts `secret` in place of whatever the file holds (atomically, 0600):
    /// how a cloud learns the secret of a device whose files are on another host.
    package func replace(with secret: String) throws {
        guard Self.isSecret(secret) else {
            throw SharedFileError.notASecret(path: path, digits: Self.hexDigits)
        }
        // 64 random digits use nearly all 16 (fewer than 10 happens about once in 10^12): anything else was typed, not made.
        let distinct = Set(secret.utf8).count
        guard distinct >= 10 else {
            throw SharedFileError.secretNotRandom(path: path, distinct: distinct)
        }
        _ = try folder.withDescriptor(creating: true) { descriptor in
            let temporary = ".\(name).tmp.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
            try writeTemporaryFile(Data((secret + "\n").utf8), named: temporary, in: descriptor, folderPath: folder.path, durable: true)
            guard renameat(descriptor, temporary, descriptor, name) == 0 else {
                let failure = errno
                unlinkat(descriptor, temporary, 0)
                throw SharedFileError.systemCall(operation: "put the secret in place", path: path, errno: failure)
            }
            try systemCall("fsync the folder", folder.path) { fsync(descriptor) }
        }
    }

    /// Removes the file; false when there was none.
    package func remove() throws -> Bool {
        try folder.withDescriptor(creating: false) { descriptor -> Bool in
            if unlinkat(descriptor, name, 0) == 0 { return true }
            if errno == ENOENT { return false }
            throw SharedFileError.systemCall(operation: "remove the secret", path: path, errno: errno)
        } ?? false
    }

    private func read(in descriptor: Int32) throws -> String? {
        let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if file == -1 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw SharedFileError.symbolicLink(path: path) }
            throw SharedFileError.systemCall(operation: "read the secret", path: path, errno: errno)
        }
        defer { close(file) }
        var info = stat()
        try systemCall("inspect the secret", path) { fstat(file, &info) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SharedFileError.notARegularFile(path: path, kind: describeFileType(info.st_mode))
        }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw SharedFileError.secretExposed(path: path, mode: UInt32(info.st_mode), owner: info.st_uid, user: geteuid())
        }
        var bytes = [UInt8](repeating: 0, count: Self.hexDigits + 2)
        let count = try systemCall("read the secret", path) { Int32(Glibc.read(file, &bytes, bytes.count)) }
        let text = String(decoding: bytes[0..<Int(count)], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard Self.isSecret(text) else {
            throw SharedFileError.secretUnreadable(path: path, digits: Self.hexDigits)
        }
        return text
    }

    /// Whether `offered` is `secret`, in time that does not depend on where they differ.
    package static func matches(_ offered: String, _ secret: String) -> Bool {
        let a = Array(offered.utf8)
        let b = Array(secret.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<b.count { difference |= (index < a.count ? a[index] : 0) ^ b[index] }
        return difference == 0
    }
}
