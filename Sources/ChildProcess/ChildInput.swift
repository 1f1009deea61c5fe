import Foundation
import Guarded

#if canImport(Glibc)
    import Glibc
#endif

/// How a write to a child's stdin ended.
package enum InputWrite: Sendable, Equatable {
    case written
    /// The child closed its stdin (or exited): nothing more can be written.
    case closed
    /// The child did not take it all in time (it does not read its stdin, or
    /// is stopped, and the pipe is full): `unwritten` of its bytes were not taken.
    case timedOut(unwritten: Int)
}

/// The one owner of the write end of a child's stdin pipe. The descriptor
/// is non-blocking, so a write waits for room with `poll` and a deadline:
/// a child that never reads cannot hold its writer for ever. Writes are
/// whole (one at a time, under `lock`), so lines written from several
/// threads never interleave.
/// Unchecked Sendable: `handle` and `closed` are used under `lock` only.
final class ChildInput: @unchecked Sendable {
    private let lock = Locked()
    private let handle: FileHandle
    private var closed = false

    init(_ handle: FileHandle) {
        self.handle = handle
        let descriptor = handle.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Writes all of `bytes`, waiting for room up to `timeout` seconds (nil: as long as it takes).
    func write(_ bytes: Data, timeout: TimeInterval?) -> InputWrite {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        return lock.withLock {
            guard !closed else { return .closed }
            return bytes.withUnsafeBytes { buffer in
                Self.write(buffer, to: handle.fileDescriptor, deadline: deadline)
            }
        }
    }

    func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            try? handle.close()
        }
    }

    private static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, deadline: Date?) -> InputWrite {
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written > 0 {
                offset += written
                continue
            }
            guard written < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return .closed }
            guard let milliseconds = remainingMilliseconds(until: deadline) else { return .timedOut(unwritten: buffer.count - offset) }
            var room = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            // POLLERR (the reader closed its end) wakes it too: the next write then says EPIPE.
            if poll(&room, 1, milliseconds) < 0, errno != EINTR { return .closed }
        }
        return .written
    }

    /// What `poll` waits: -1 (for ever) without a deadline, nil once it passed.
    private static func remainingMilliseconds(until deadline: Date?) -> Int32? {
        guard let deadline else { return -1 }
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { return nil }
        return Int32(min((left * 1000).rounded(.up), 1000))
    }
}
