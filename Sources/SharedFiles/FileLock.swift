import Foundation
import Guarded
import SimulationValues

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive lock shared by threads and processes, held on a lock file
/// that is never renamed (locking the data file itself fails once a rename
/// replaces its inode).
///
/// A mutex serializes this process's threads first, so they queue in memory
/// rather than each polling the `flock` during the bounded wait. The lock
/// file is opened in a folder descriptor the caller opened for this one
/// operation, and only while locked: a descriptor held open would pin its
/// folder, and a deleted folder (a device erased) would then never be
/// reported gone to inotify watchers. The kernel releases the lock if the
/// process dies; a holder that is stopped or hung is waited for at most
/// `LockWaitLimit.seconds`, then named in the error.
/// Unchecked Sendable: `threadMutex` (taken before the flock: the file lock's own first half) orders this process's threads; the descriptor exists only inside `withLock`, held by the thread that has the mutex.
package final class FileLock: @unchecked Sendable {
    /// The lock file's name in its folder.
    package let name: String
    private let threadMutex = Locked()

    package init(name: String) {
        self.name = name
    }

    /// Creates the lock file in `folder` if missing (to fail early, with the path).
    func create(in folder: Int32, path: String) throws {
        _ = Glibc.close(try open(in: folder, path: path))
    }

    /// Runs `body` holding the lock, waiting for it until `deadline`
    /// (`MonotonicClock` nanoseconds). `path` names the lock file in messages.
    func withLock<T>(in folder: Int32, path: String, deadline: UInt64, _ body: () throws -> T) throws -> T {
        let waitLimit = try LockWaitLimit.seconds()
        let now = MonotonicClock.now()
        let remaining = deadline > now ? Double(deadline - now) / 1e9 : 0
        return try threadMutex.withLock(waitingAtMost: remaining) { _ in
            let descriptor = try acquire(in: folder, path: path, deadline: deadline, waitLimit: waitLimit)
            defer { _ = Glibc.close(descriptor) }  // closing releases the flock
            return try body()
        } timedOut: {
            // Another thread of this process has the lock or waits for it: name whoever holds the flock.
            let descriptor = try open(in: folder, path: path)
            defer { _ = Glibc.close(descriptor) }
            throw SharedFileError.lockTimeout(path: path, seconds: waitLimit, holder: LockHolder.find(lockedFile: descriptor))
        }
    }

    /// Read-only is enough for flock, and its close wakes no watcher (no
    /// IN_CLOSE_WRITE). O_NONBLOCK: a FIFO planted in its place must not block the open.
    private func open(in folder: Int32, path: String) throws -> Int32 {
        let descriptor = openat(folder, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        if descriptor == -1 {
            let code = errno
            // The folder was removed after it was opened (a device erased): the caller starts over.
            if code == ENOENT { throw SharedFileError.folderRemoved(operation: "open the lock file", path: path, errno: code) }
            if code == ELOOP { throw SharedFileError.notARegularFile(path: path, kind: "a symbolic link") }
            throw SharedFileError.systemCall(operation: "open the lock file", path: path, errno: code)
        }
        var info = stat()
        do {
            try systemCall("inspect the lock file", path) { fstat(descriptor, &info) }
            guard info.st_mode & S_IFMT == S_IFREG else { throw SharedFileError.notARegularFile(path: path, kind: describeFileType(info.st_mode)) }
        } catch {
            _ = Glibc.close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Locks, then checks that the name still denotes the locked inode: if the
    /// file was deleted meanwhile, others would lock a new one, so retry.
    private func acquire(in folder: Int32, path: String, deadline: UInt64, waitLimit: Double) throws -> Int32 {
        while true {
            let descriptor = try open(in: folder, path: path)
            do {
                try wait(for: descriptor, path: path, deadline: deadline, waitLimit: waitLimit)
                var held = stat()
                var current = stat()
                try systemCall("inspect the lock file", path) { fstat(descriptor, &held) }
                if fstatat(folder, name, &current, AT_SYMLINK_NOFOLLOW) == 0 {
                    if current.st_ino == held.st_ino && current.st_dev == held.st_dev { return descriptor }
                } else if errno != ENOENT {
                    throw SharedFileError.systemCall(operation: "inspect the lock file", path: path, errno: errno)
                }
            } catch {
                _ = Glibc.close(descriptor)
                throw error
            }
            _ = Glibc.close(descriptor)
        }
    }

    /// Takes the flock without ever blocking in the kernel, so the wait can
    /// end. An uncontended lock costs one call. A held one is retried after
    /// pauses that double from 10 µs to 100 µs while the wait is short (a
    /// commit holds the lock about a millisecond: the lock is taken soon
    /// after its release, and a writer committing in a loop cannot keep it
    /// to itself), then, after 20 ms (a holder stopped or hung), up to 1 ms,
    /// so a long wait costs at most a thousand wake-ups a second.
    private func wait(for descriptor: Int32, path: String, deadline: UInt64, waitLimit: Double) throws {
        let started = MonotonicClock.now()
        var pause: UInt64 = 10_000
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK else { throw SharedFileError.systemCall(operation: "lock", path: path, errno: code) }
            let now = MonotonicClock.now()
            guard now < deadline else {
                throw SharedFileError.lockTimeout(path: path, seconds: waitLimit, holder: LockHolder.find(lockedFile: descriptor))
            }
            // Jitter keeps several waiters from retrying in step.
            let sleep = min(pause + UInt64.random(in: 0...pause / 2), deadline - now)
            var request = timespec(tv_sec: Int(sleep / 1_000_000_000), tv_nsec: Int(sleep % 1_000_000_000))
            _ = nanosleep(&request, nil)
            pause = min(pause * 2, now - started < 20_000_000 ? 100_000 : 1_000_000)
        }
    }
}

/// How long a writer waits for a file lock before giving up:
/// `GROUPSIM_LOCK_TIMEOUT` seconds (0 to one day), else 10.
package enum LockWaitLimit {
    static let environmentVariable = SimulationEnvironment.Name.lockTimeout
    static let defaultSeconds = 10.0
    static let maximumSeconds = 86_400.0

    private static let configured = parse(SimulationEnvironment.current[environmentVariable])

    /// The configured wait; an invalid setting is an error of every wait, never a silent default.
    package static func seconds() throws -> Double { try configured.get() }

    /// The wait as a deadline from now, in `MonotonicClock` nanoseconds.
    package static func deadline(from start: UInt64) throws -> UInt64 {
        start + UInt64(try seconds() * 1e9)
    }

    static func parse(_ text: String?) -> Result<Double, SharedFileError> {
        guard let text, !text.isEmpty else { return .success(defaultSeconds) }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0, value <= maximumSeconds else {
            return .failure(.invalidLockTimeout(value: text))
        }
        return .success(value)
    }
}

/// The process holding a file lock, as /proc/locks tells (Linux).
package struct LockHolder: Sendable, Equatable, CustomStringConvertible {
    package let pid: Int32
    /// From /proc/PID/comm; nil if the process could not be inspected.
    package let name: String?

    package var description: String { "process \(pid)" + (name.map { " (\($0))" } ?? "") }

    /// The holder of the flock on the file open at `descriptor`, if any.
    static func find(lockedFile descriptor: Int32) -> LockHolder? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        guard let pid = holderPID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), locks: table) else { return nil }
        return LockHolder(pid: pid, name: name(of: pid))
    }

    /// Parses /proc/locks lines such as `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`
    /// (`->` marks a waiter, not a holder; the device is major:minor in hex).
    static func holderPID(device: UInt64, inode: UInt64, locks: String) -> Int32? {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK" else { continue }
            let place = fields[5].split(separator: ":")
            guard place.count == 3, UInt64(place[2]) == inode, UInt64(place[0], radix: 16) == major, UInt64(place[1], radix: 16) == minor,
                let pid = Int32(fields[4]), pid > 0
            else { continue }
            return pid
        }
        return nil
    }

    static func name(of pid: Int32) -> String? {
        guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return nil }
        let name = comm.trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? nil : name
    }
}
