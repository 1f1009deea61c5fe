import Foundation
import Guarded

#if canImport(Glibc)
    import Glibc
#endif

/// Lines read from a child, waited for with a timeout: a child's standard
/// output (`RunningProcess`) or its control channel (`LineConnection`).
package protocol LineStream: AnyObject {
    /// Waits for (and consumes up to) the first line satisfying `predicate`.
    @discardableResult
    func waitForLine(timeout: TimeInterval, where predicate: (String) -> Bool) throws -> String
    /// Writes one line; false if the other end is gone.
    @discardableResult
    func write(_ line: String) -> Bool
}

extension RunningProcess: LineStream {}

/// Unix stream sockets named by a path.
package enum UnixSocket {
    /// The address of `path`, which must fit `sun_path`.
    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw ChildProcessError.socketPathLength(path: path, capacity: capacity)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A new stream socket, closed on exec.
    static func make() throws -> Int32 {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ChildProcessError.socketNotMade(errno: errno) }
        return socket
    }

    /// A stream socket (closed on exec) connected to the one listening at
    /// `path`, which must be listened on by this process's own user: the
    /// kernel says who made the listener (`SO_PEERCRED`), at the moment of
    /// connecting, so no socket put in its place by another user (one who
    /// listened at the path first, or swapped it in a folder others can
    /// write) is ever told anything.
    package static func connectToOwnListener(at path: String) throws -> Int32 {
        var address = try address(path)
        let socket = try make()
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(socket)
            throw ChildProcessError.connectFailed(path: path, errno: code)
        }
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            let code = errno
            close(socket)
            throw ChildProcessError.peerUnknown(path: path, errno: code)
        }
        guard credentials.uid == geteuid() else {
            close(socket)
            throw ChildProcessError.listenerOfAnotherUser(path: path, uid: credentials.uid, pid: credentials.pid, ownUID: geteuid())
        }
        return socket
    }

    /// `struct ucred` (`SO_PEERCRED`'s answer): glibc declares it only under `_GNU_SOURCE`, which Swift's Glibc is not built with.
    private struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    package static let privateFolderAdvice =
        "Listen in a folder only you can write, e.g. one made with `mkdir -m 700` or `mktemp -d`, or $XDG_RUNTIME_DIR"

    /// Why a driver's socket at `path` cannot be trusted to be this user's,
    /// or nil: it must be a socket this user owns, in a folder this user owns
    /// that no one else may write (else another user could have listened
    /// there first, or put a socket of theirs in its place).
    package static func problemWithListener(at path: String) -> String? {
        var socket = stat()
        guard lstat(path, &socket) == 0 else { return "nothing is there (\(String(cString: strerror(errno))))" }
        guard socket.st_mode & S_IFMT == S_IFSOCK else {
            return socket.st_mode & S_IFMT == S_IFLNK ? "it is a symbolic link, not a socket" : "it is not a socket"
        }
        guard socket.st_uid == geteuid() else {
            return "the socket belongs to user \(socket.st_uid), not to this user (\(geteuid())): another user may be listening there"
        }
        let folderPath = (path as NSString).deletingLastPathComponent
        let folderName = folderPath.isEmpty ? "." : folderPath
        var folder = stat()
        guard stat(folderName, &folder) == 0 else { return "its folder '\(folderName)' cannot be read (\(String(cString: strerror(errno))))" }
        guard folder.st_uid == geteuid() else {
            return "its folder '\(folderName)' belongs to user \(folder.st_uid), not to this user (\(geteuid()))"
        }
        guard folder.st_mode & 0o022 == 0 else {
            return "its folder '\(folderName)' may be written by others (mode \(String(folder.st_mode & 0o7777, radix: 8))): "
                + "another user could listen there first, or replace the socket"
        }
        return nil
    }
}

/// The driver's end of a program's control channel (docs/protocol.md, "The
/// control channel of your own executable"): a Unix socket listening at
/// `path`, which a program started with `GROUPSIM_CONTROL_SOCKET=path` (or
/// `groupsim exec --control-socket path`) connects to as it loads.
/// Unchecked Sendable: its state is the path and the descriptor, both set in `init` and never changed.
package final class LineSocketListener: @unchecked Sendable {
    package let path: String
    private let descriptor: Int32

    /// Listens at `path` (which must not exist yet; it is removed again when this goes).
    package init(path: String) throws {
        var address = try UnixSocket.address(path)
        let socket = try UnixSocket.make()
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(socket, 4) == 0 else {
            let code = errno
            close(socket)
            throw ChildProcessError.listenFailed(path: path, errno: code)
        }
        self.path = path
        descriptor = socket
    }

    /// The next program that connects, waiting at most `timeout` seconds;
    /// `handler`, if given, gets its lines (see `LineConnection.init`).
    package func accept(timeout: TimeInterval, handler: (@Sendable (String?) -> Void)? = nil) throws -> LineConnection {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            let ready = poll(&poller, 1, remaining)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { throw ChildProcessError.noConnection(path: path, seconds: timeout) }
            let connection = Glibc.accept(descriptor, nil, nil)
            if connection < 0, errno == EINTR || errno == EAGAIN { continue }
            guard connection >= 0 else { throw ChildProcessError.acceptFailed(path: path, errno: errno) }
            // Not inherited by children this process starts later (accept4 is not in Swift's view of glibc).
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            return LineConnection(descriptor: connection, handler: handler)
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}

/// A connected stream socket, read line by line by one thread and written
/// line by line. The reader keeps this object alive until end of file; the
/// descriptor is closed when the object goes, so no call here ever meets a
/// descriptor number that was closed and reused.
/// Unchecked Sendable: the lines, the partial line and the flags are reached only through `state`'s lock; the descriptor is set once.
package final class LineConnection: LineStream, @unchecked Sendable {
    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
        var cursor = 0
        var closed = false
    }
    private let descriptor: Int32
    private let state = LockedCondition(State())

    /// Called on the reader thread with each line as it arrives, then once with nil at end of file.
    private let handler: (@Sendable (String?) -> Void)?

    /// Takes `descriptor`, a connected stream socket. With a `handler`, lines
    /// go to it only, one at a time in order (a reader that bounds what it
    /// keeps), and `nextLine`/`allLines` have none.
    package init(descriptor: Int32, handler: (@Sendable (String?) -> Void)? = nil) {
        self.descriptor = descriptor
        self.handler = handler
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                receive(buffer[0..<count])
            }
            let last = state.withLock { state -> String? in
                defer { state.partial = [] }
                guard !state.partial.isEmpty else { return nil }
                let line = String(decoding: state.partial, as: UTF8.self)
                if handler == nil { state.lines.append(line) }
                return line
            }
            if let last { handler?(last) }
            handler?(nil)
            state.withLock { $0.closed = true }
        }.start()
    }

    private func receive(_ chunk: ArraySlice<UInt8>) {
        let complete = state.withLock { state -> [String] in
            state.partial.append(contentsOf: chunk)
            var complete: [String] = []
            var start = 0
            while let newline = state.partial[start...].firstIndex(of: 0x0A) {
                complete.append(String(decoding: state.partial[start..<newline], as: UTF8.self))
                start = newline + 1
            }
            state.partial.removeFirst(start)
            if handler == nil { state.lines += complete }
            return complete
        }
        for line in complete { handler?(line) }
    }

    /// The next line not yet returned, waiting up to `timeout`; nil once the other end closed.
    package func nextLine(timeout: TimeInterval) throws -> String? {
        enum Next {
            case line(String)
            case closed
        }
        let next = state.wait(atMost: timeout) { state -> Next? in
            if state.cursor < state.lines.count {
                state.cursor += 1
                return .line(state.lines[state.cursor - 1])
            }
            return state.closed ? .closed : nil
        }
        switch next {
        case .line(let line): return line
        case .closed: return nil
        case nil: throw ChildProcessError.noControlLine(seconds: timeout)
        }
    }

    @discardableResult
    package func waitForLine(timeout: TimeInterval, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, let line = try nextLine(timeout: remaining) else {
                throw ChildProcessError.controlLineNotSeen(seconds: timeout, seen: Array(allLines.suffix(5)))
            }
            if predicate(line) { return line }
        }
    }

    /// Every line received so far.
    package var allLines: [String] { state.withLock { $0.lines } }
    /// Whether the other end has closed (every line it sent is in `allLines`).
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Waits until the other end closes, at most `timeout` seconds; true if it did.
    package func waitUntilClosed(timeout: TimeInterval) -> Bool {
        state.wait(atMost: timeout) { $0.closed }
    }

    /// Writes `line` and a newline, whole (blocking while the socket is full); false if the other end is gone.
    @discardableResult
    package func write(_ line: String) -> Bool { writeRaw(Array((line + "\n").utf8)) }

    /// Writes bytes as they are (for malformed-input tests).
    @discardableResult
    package func writeRaw(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }

    /// Ends both directions: the program sees the channel closed, and the reader thread ends.
    package func close() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    deinit { Glibc.close(descriptor) }
}
