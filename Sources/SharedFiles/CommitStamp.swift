import Foundation

/// The store's mark on a file it wrote: an extended attribute holding the
/// file's modification time and size as written. A file changed any other
/// way (rewritten in place by an editor, replaced by another tool) no longer
/// matches its mark, so a process reading through cfprefsd's cache (macOS)
/// can tell the store's commits, `defaults write` among them, from direct edits.
package enum CommitStamp {
    static let attribute = "user.groupsim.commit"

    /// Who last wrote a file.
    package enum Writer: Sendable, Equatable {
        case store, foreign, absent
    }

    // Glibc's Swift module leaves out <sys/xattr.h>: its two calls are found by name, with C's calling convention.
    private typealias SetAttribute = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32
    private typealias GetAttribute = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
    private static let setAttribute = dlsym(nil, "fsetxattr").map { unsafeBitCast($0, to: SetAttribute.self) }
    private static let getAttribute = dlsym(nil, "fgetxattr").map { unsafeBitCast($0, to: GetAttribute.self) }

    /// The mark of a file written with the status `info`.
    static func value(of info: stat) -> String { "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_size)" }

    /// Marks the open file just written. Best effort: on a file system
    /// without user attributes nothing is marked, and `writer` then counts
    /// every writer as the store (today's behaviour).
    /// `info`: the file's status once written (its time and size are the mark).
    static func mark(_ descriptor: Int32, written info: stat) {
        let bytes = Array(value(of: info).utf8)
        _ = setAttribute?(descriptor, attribute, bytes, bytes.count, 0)
    }

    /// Who last wrote `name` in `folder`.
    static func writer(of name: String, in folder: Int32) -> Writer {
        let descriptor = openat(folder, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return errno == ENOENT ? .absent : .store }
        defer { close(descriptor) }
        return writer(ofOpen: descriptor)
    }

    /// Who last wrote the open file: for a reader that must judge the very
    /// file its bytes came from, after reading them.
    static func writer(ofOpen descriptor: Int32) -> Writer {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .store }
        switch recorded(ofOpen: descriptor) {
        case .unsupported: return .store
        case .none: return .foreign
        case .some(let mark): return mark == value(of: info) ? .store : .foreign
        }
    }

    /// The mark an open file carries: the store's last commit of it, even
    /// when the file was edited in place since (an edit keeps the attribute).
    enum Recorded: Equatable {
        /// The file system keeps no user attributes.
        case unsupported
        /// None: a file the store never wrote (or replaced by another tool).
        case none
        case some(String)
    }

    static func recorded(ofOpen descriptor: Int32) -> Recorded {
        guard let getAttribute else { return .unsupported }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = getAttribute(descriptor, attribute, &buffer, buffer.count)
        if count < 0 { return errno == ENOTSUP || errno == EOPNOTSUPP ? .unsupported : .none }
        return .some(String(decoding: buffer[..<count], as: UTF8.self))
    }
}
