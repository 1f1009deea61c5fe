import Foundation
import PropertyList

/// Errors of shared files beyond system-call failures, each saying what was
/// found, where, and what to do.
package enum SharedFileError: Error, CustomStringConvertible, Equatable {
    case corrupt(path: String, reason: String)
    /// Something other than a regular file where a file is read or written (a FIFO, a folder…).
    case notARegularFile(path: String, kind: String)
    /// A file on disk larger than a reader takes.
    case fileTooLarge(path: String, size: Int64, limit: Int)
    /// New contents larger than a writer writes.
    case contentsTooLarge(path: String, size: Int, limit: Int)
    /// New contents that reach a size the caller's platform refuses (`update(refusingSize:)`): tvOS's and watchOS's 1 MiB.
    case sizeLimitReached(path: String, size: Int, limit: Int)
    /// A symbolic link on the way from the top folder to a file.
    case symbolicLink(path: String)
    /// Something other than a folder on the way from the top folder to a file.
    case notAFolder(path: String, kind: String)
    /// A path that does not lie under the top folder it must stay in.
    case outsideTop(path: String, top: String)
    /// Folders nested deeper than a removal descends.
    case nestedTooDeep(path: String, limit: Int)
    /// The lock was not free within the wait limit.
    case lockTimeout(path: String, seconds: Double, holder: LockHolder?)
    /// `GROUPSIM_LOCK_TIMEOUT` is not a number of seconds.
    case invalidLockTimeout(value: String)

    package var description: String {
        switch self {
        case .corrupt(let path, let reason):
            "'\(path)' is not a valid property-list dictionary: \(reason). It is left untouched; "
                + "the next write moves it aside (to '\((path as NSString).lastPathComponent).corrupt-…') and starts the domain empty."
        case .notARegularFile(let path, let kind):
            "'\(path)' is \(kind), not a regular file, so it was neither read nor written; move it away or remove it."
        case .fileTooLarge(let path, let size, let limit):
            "'\(path)' is \(Self.bytes(size)), more than the \(Self.bytes(Int64(limit))) a file of its kind may hold here, "
                + "so it was not read; move it away or remove it."
        case .contentsTooLarge(let path, let size, let limit):
            "the new contents of '\(path)' would be \(Self.bytes(Int64(size))), more than the \(Self.bytes(Int64(limit))) "
                + "a file of its kind may hold here; nothing was written and the change stays pending. "
                + "Remove keys, or keep large data in files of its own."
        case .sizeLimitReached(let path, let size, let limit):
            "the new contents of '\(path)' would be \(Self.bytes(Int64(size))), reaching the limit of \(Self.bytes(Int64(limit))) "
                + "its platform stores; nothing was written. Remove keys, or keep large data in files of its own."
        case .symbolicLink(let path):
            "'\(path)' is a symbolic link; the simulation root must contain real folders, so it is not followed and "
                + "nothing was read or written through it. Replace the link with a real folder, or remove it."
        case .notAFolder(let path, let kind):
            "'\(path)' is \(kind) where a folder belongs; nothing was read or written there. Move it away or remove it."
        case .outsideTop(let path, let top):
            "'\(path)' does not lie inside '\(top)'; nothing is read or written outside it."
        case .nestedTooDeep(let path, let limit):
            "'\(path)' nests folders more than \(limit) deep; it was left in place. Remove it by hand."
        case .lockTimeout(let path, let seconds, let holder):
            "gave up waiting for the lock '\(path)' after \(Self.seconds(seconds)) s: "
                + (holder.map { "\($0) holds it" } ?? "another process holds it (not found in /proc/locks)")
                + ". Nothing was written; the change stays pending and is retried on the next write or synchronize(). "
                + (holder.map { "If process \($0.pid) is stopped, resume it (kill -CONT \($0.pid)); if it hangs, end it. " } ?? "")
                + "\(LockWaitLimit.environmentVariable) sets the wait in seconds (default \(Self.seconds(LockWaitLimit.defaultSeconds)))."
        case .invalidLockTimeout(let value):
            "\(LockWaitLimit.environmentVariable)='\(value)' is not a number of seconds from 0 to \(Self.seconds(LockWaitLimit.maximumSeconds)) "
                + "(e.g. 2.5); nothing was written and the change stays pending. Fix or unset it (default \(Self.seconds(LockWaitLimit.defaultSeconds)))."
        }
    }

    /// "20.0 GiB (21474836480 bytes)".
    static func bytes(_ count: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = "bytes"
        for next in units where value >= 1024 {
            value /= 1024
            unit = next
        }
        if unit == "bytes" { return "\(count) bytes" }
        let rounded = (value * 10).rounded() / 10
        return "\(rounded) \(unit) (\(count) bytes)"
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
