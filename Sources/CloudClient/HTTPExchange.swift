import CloudModel
import Foundation
import Glibc
import Guarded

/// What a server answered: its status and its body.
struct HTTPReply: Sendable, Equatable {
    var status: UInt
    var body: [UInt8]
}

/// One HTTP/1.1 request and its reply over a TCP socket of its own
/// (`Connection: close`), on a thread of its own that ends by the deadline.
///
/// It trusts nothing the server sends: a server that never accepts or never
/// answers costs the request its `timeout`, no more (a stopped cloud's kernel
/// still accepts connections); one that answers for ever stops at
/// `maximumReplyBytes` or the deadline; a head that never ends stops at
/// `maximumHeadBytes`; a malformed head, a Content-Length that is not a byte
/// count (or one past the largest reply) and a connection closed before the
/// reply is whole are each an error that says so.
struct HTTPExchange: Sendable {
    /// The largest reply head read: the cloud's are a few hundred bytes.
    static let maximumHeadBytes = 64 << 10
    /// The largest reply body read: a store's records as JSON fit many times over.
    static let maximumReplyBytes = 64 << 20

    let host: String
    let port: Int
    /// `Host:`, as `HOST:PORT` (`[IPv6]:PORT`).
    let hostHeader: String
    let path: String
    let secret: String
    /// POSTed as JSON when present; a GET otherwise.
    let body: [UInt8]?
    var maximumReplyBytes = HTTPExchange.maximumReplyBytes

    /// Sends the request and reads the whole reply within `timeout` (the
    /// connection within `connectTimeout` of it), on a thread of its own:
    /// the blocking calls never hold a thread of the cooperative pool. A
    /// cancelled task stops waiting within a tenth of a second.
    /// A `CloudClientError` says what went wrong of the server ("did not answer …"): the caller puts which server before it.
    func perform(timeout: Duration, connectTimeout: Duration) async throws -> HTTPReply {
        let request: [UInt8]
        switch requestBytes() {
        case .success(let bytes): request = bytes
        case .failure(let problem): throw problem
        }
        let start = ContinuousClock.now
        let deadline = start + timeout
        let connectDeadline = min(deadline, start + connectTimeout)
        let cancelled = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPReply, any Error>) in
                let thread = Thread {
                    do {
                        continuation.resume(
                            returning: try run(
                                request, timeout: timeout, deadline: deadline, connectTimeout: connectTimeout, connectDeadline: connectDeadline,
                                cancelled: cancelled))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
                thread.name = "groupsim.cloud-request"
                thread.start()
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// The request's bytes; a problem when the path or the secret would break the head.
    func requestBytes() -> Result<[UInt8], CloudClientError> {
        let plain = { (text: String) in text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F } }
        guard path.hasPrefix("/"), plain(path) else {
            return .failure(.unsendablePath(path))
        }
        guard plain(secret) else {
            return .failure(.unsendableSecret)
        }
        var head = "\(body == nil ? "GET" : "POST") \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\n"
        head += "Authorization: Bearer \(secret)\r\nConnection: close\r\nContent-Length: \(body?.count ?? 0)\r\n"
        if body != nil { head += "Content-Type: application/json\r\n" }
        return .success(Array((head + "\r\n").utf8) + (body ?? []))
    }

    private func run(
        _ request: [UInt8], timeout: Duration, deadline: ContinuousClock.Instant, connectTimeout: Duration,
        connectDeadline: ContinuousClock.Instant, cancelled: CancellationFlag
    ) throws -> HTTPReply {
        let noAnswer = CloudClientError.noAnswer(path: path, within: timeout)
        let noConnection = CloudClientError.noConnection(path: path, within: min(timeout, connectTimeout))
        let socket = try connect(until: connectDeadline, cancelled: cancelled, noConnection: noConnection)
        defer { close(socket) }
        let sendError = try send(request, on: socket, until: deadline, cancelled: cancelled, noAnswer: noAnswer)
        do {
            return try receive(on: socket, until: deadline, cancelled: cancelled, noAnswer: noAnswer)
        } catch let problem as CloudClientError {
            // A server may answer before it has read the whole request, and close; its answer is what counts.
            guard let sendError else { throw problem }
            throw CloudClientError.closedBeforeRequest(path: path, errno: sendError)
        }
    }

    /// A connected socket (non-blocking, close-on-exec), trying each address the host has.
    private func connect(until deadline: ContinuousClock.Instant, cancelled: CancellationFlag, noConnection: CloudClientError) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var addresses: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &addresses)
        guard resolved == 0, let first = addresses else {
            throw CloudClientError.unknownHost(code: resolved)
        }
        defer { freeaddrinfo(addresses) }
        var lastError: Int32 = ECONNREFUSED
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next?.pointee {
            next = address.ai_next
            let socket = Glibc.socket(
                address.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard socket >= 0 else {
                lastError = errno
                continue
            }
            var connected = Glibc.connect(socket, address.ai_addr, address.ai_addrlen) == 0
            if !connected && (errno == EINPROGRESS || errno == EINTR) {
                let writable: Bool
                do { writable = try Self.wait(socket, for: Int16(POLLOUT), until: deadline, cancelled: cancelled) } catch {
                    close(socket)
                    throw error
                }
                guard writable else {
                    close(socket)
                    throw noConnection
                }
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                connected = getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
                lastError = error
            } else if !connected {
                lastError = errno
            }
            if connected { return socket }
            close(socket)
        }
        throw CloudClientError.refused(errno: lastError)
    }

    /// Writes the whole request; the errno that stopped it, if the peer closed first.
    private func send(
        _ bytes: [UInt8], on socket: Int32, until deadline: ContinuousClock.Instant, cancelled: CancellationFlag, noAnswer: CloudClientError
    ) throws -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent >= 0 {
                offset += sent
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                guard try Self.wait(socket, for: Int16(POLLOUT), until: deadline, cancelled: cancelled) else { throw noAnswer }
            case let error: return error
            }
        }
        return nil
    }

    private func receive(
        on socket: Int32, until deadline: ContinuousClock.Instant, cancelled: CancellationFlag, noAnswer: CloudClientError
    ) throws -> HTTPReply {
        var reader = HTTPReplyReader(maximumHeadBytes: Self.maximumHeadBytes, maximumBodyBytes: maximumReplyBytes)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                if let reply = try reader.take(chunk[..<count]) { return reply }
                continue
            }
            if count == 0 { return try reader.closed() }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                guard try Self.wait(socket, for: Int16(POLLIN), until: deadline, cancelled: cancelled) else { throw noAnswer }
            case let error:
                throw CloudClientError.brokeConnection(path: path, errno: error)
            }
        }
    }

    /// Waits until `socket` is ready for `events` (or has an error, which the
    /// next call reports); false once `deadline` passes. Polls in tenths of a
    /// second so that a cancelled request stops soon.
    private static func wait(_ socket: Int32, for events: Int16, until deadline: ContinuousClock.Instant, cancelled: CancellationFlag) throws -> Bool
    {
        while true {
            if cancelled.isSet { throw CancellationError() }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            // A second or more left is a full slice (and no product that could overflow).
            let milliseconds = seconds > 0 ? 100 : min(100, (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(milliseconds))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR {
                throw CloudClientError.pollFailed(errno: errno)
            }
        }
    }
}

/// An HTTP/1.1 reply read as its bytes come: the head (bounded), then a
/// body of its Content-Length, or up to the connection's end without one
/// (bounded too). Pure, so that every hostile shape is tested without a socket.
struct HTTPReplyReader {
    let maximumHeadBytes: Int
    let maximumBodyBytes: Int
    private var buffer: [UInt8] = []
    private var head: (status: UInt, contentLength: Int?)?
    private var bodyStart = 0

    init(maximumHeadBytes: Int, maximumBodyBytes: Int) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Takes the next bytes; the reply once it is whole (its Content-Length read).
    mutating func take(_ bytes: some Collection<UInt8>) throws(CloudClientError) -> HTTPReply? {
        let scanFrom = max(bodyStart, buffer.count - 3)
        buffer.append(contentsOf: bytes)
        if head == nil {
            guard let end = Self.headEnd(in: buffer, from: scanFrom), end <= maximumHeadBytes else {
                if buffer.count > maximumHeadBytes {
                    throw .headTooLong(limit: maximumHeadBytes)
                }
                return nil
            }
            head = try Self.parseHead(buffer[..<end], maximumBodyBytes: maximumBodyBytes)
            bodyStart = end
        }
        let received = buffer.count - bodyStart
        if let length = head?.contentLength {
            guard received >= length else { return nil }
            return HTTPReply(status: head!.status, body: Array(buffer[bodyStart..<(bodyStart + length)]))
        }
        guard received <= maximumBodyBytes else {
            throw .replyTooLong(limit: maximumBodyBytes)
        }
        return nil
    }

    /// The server closed the connection: the reply, if it is whole.
    func closed() throws(CloudClientError) -> HTTPReply {
        guard let head else {
            throw .closedBeforeHead(received: buffer.count)
        }
        let received = buffer.count - bodyStart
        if let length = head.contentLength {
            throw .closedBeforeBody(received: received, length: length)
        }
        return HTTPReply(status: head.status, body: Array(buffer[bodyStart...]))
    }

    /// The index just past the blank line that ends a head, searching from `start`.
    private static func headEnd(in buffer: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= 4 else { return nil }
        var index = max(0, start)
        while index + 4 <= buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 { return index + 4 }
            index += 1
        }
        return nil
    }

    /// The status and the Content-Length of a head (its lines end in CRLF; it ends with a blank line).
    static func parseHead(_ bytes: ArraySlice<UInt8>, maximumBodyBytes: Int) throws(CloudClientError) -> (status: UInt, contentLength: Int?) {
        let malformed = { (why: String) in CloudClientError.notHTTP(why: why) }
        let text = String(decoding: bytes.dropLast(4), as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        for line in lines where line.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
            throw malformed("a line of its head holds a control character: \(CloudFormatError.brief(line))")
        }
        let statusLine = lines[0].utf8
        guard statusLine.starts(with: "HTTP/1.1 ".utf8) || statusLine.starts(with: "HTTP/1.0 ".utf8) else {
            throw malformed("its status line is \(CloudFormatError.brief(lines[0]))")
        }
        let code = statusLine.dropFirst(9)
        guard code.count == 3 || (code.count > 3 && code[code.index(code.startIndex, offsetBy: 3)] == UInt8(ascii: " ")),
            code.prefix(3).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let status = UInt(String(decoding: code.prefix(3), as: UTF8.self)), (100...599).contains(status)
        else {
            throw malformed("its status line has no status from 100 to 599: \(CloudFormatError.brief(lines[0]))")
        }
        var contentLength: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex, !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }) else {
                throw malformed("a header line is \(CloudFormatError.brief(line))")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            switch name {
            case "content-length":
                // Digits only, and no more than the largest body: Int(_:) alone would take "+5", and 20 digits overflow.
                guard !value.isEmpty, value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                    throw malformed("its Content-Length is \(CloudFormatError.brief(value)), not a byte count")
                }
                guard value.utf8.count <= 18, let length = Int(value), length <= maximumBodyBytes else {
                    throw .contentLengthTooLarge(value: value, limit: maximumBodyBytes)
                }
                guard contentLength == nil || contentLength == length else {
                    throw malformed("it has two Content-Length headers that differ")
                }
                contentLength = length
            case "transfer-encoding":
                throw malformed("it has Transfer-Encoding \(CloudFormatError.brief(value)) (the cloud sends a Content-Length)")
            default: continue
            }
        }
        return (status, contentLength)
    }
}

/// Set once when the request's task is cancelled; read by its thread between waits.
/// Unchecked Sendable: `value` is touched only under `lock`.
private final class CancellationFlag: @unchecked Sendable {
    private let lock = Locked()
    private var value = false

    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
