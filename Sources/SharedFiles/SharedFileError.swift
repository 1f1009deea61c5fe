import Foundation
import PropertyList

#if canImport(Glibc)
    import Glibc
#endif

/// Errors of shared files, each saying what was found, where (the path,
/// and errno for a failed system call), and what to do. `description` is the
/// one place these become text.
package enum SharedFileError: Error, CustomStringConvertible, Equatable {
    /// A failed system call: which operation, on which path, and errno.
    case systemCall(operation: String, path: String, errno: Int32)
    /// The folder an operation opened was removed under it (the call that found it gone, ENOENT); the
    /// operation starts over from the top, creating the folder again (`SharedPlistFile`), and says the
    /// system call's failure if it is removed every time.
    case folderRemoved(operation: String, path: String, errno: Int32)
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
    /// A secret to write that is not `digits` lowercase hexadecimal digits.
    case notASecret(path: String, digits: Int)
    /// A secret to write that uses only `distinct` of the 16 digits: typed, not made at random.
    case secretNotRandom(path: String, distinct: Int)
    /// A secret file others may read, or another user's.
    case secretExposed(path: String, mode: UInt32, owner: UInt32, user: UInt32)
    /// A secret file that does not hold a secret of `digits` digits.
    case secretUnreadable(path: String, digits: Int)

    package var description: String {
        switch self {
        case .systemCall(let operation, let path, let errno), .folderRemoved(let operation, let path, let errno):
            Self.systemCallText(operation, path, errno)
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
        case .notASecret(let path, let digits): "'\(path)' cannot hold that: a secret is \(digits) lowercase hexadecimal digits"
        case .secretNotRandom(let path, let distinct):
            "'\(path)' cannot hold that: it uses only \(distinct) of the 16 hexadecimal digits, so it was not made at random "
                + "(give the device's own devices/<device>/cloud/device.secret, which groupsim makes)"
        case .secretExposed(let path, let mode, let owner, let user):
            "'\(path)' "
                + String(
                    format: "has mode %03o and owner %d; a secret must be mode 0600 and this user's (%d): "
                        + "chmod 600 it, or remove it to have a new one made", mode & 0o777, owner, user)
        case .secretUnreadable(let path, let digits):
            "'\(path)' does not hold a secret (\(digits) lowercase hexadecimal digits); remove it to have a new one made"
        }
    }

    private static func systemCallText(_ operation: String, _ path: String, _ code: Int32) -> String {
        var text = "Unable to \(operation) '\(path)': \(String(cString: strerror(code)))"
        switch code {
        case EACCES, EPERM: text += " (check the permissions of the simulation root)"
        case ELOOP: text += " (a symbolic link here is not followed; replace it with a real file or folder)"
        case ENOSPC: text += " (the disk is full)"
        default: break
        }
        return text
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
