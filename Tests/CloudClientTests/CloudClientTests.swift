import Foundation
import Glibc
import PropertyList
import Testing

@testable import CloudClient

/// `CloudClient.request` against servers of the test's own on 127.0.0.1,
/// each doing one thing a broken or hostile cloud could: answer well, refuse,
/// never answer, answer for ever, send a head that never ends or is not
/// HTTP, promise more than it sends, close at once. Each must end in a clear
/// error within the request's time limit, never a hang or a crash.
@Suite(.timeLimit(.minutes(3))) struct CloudClientTests {
    /// What a request to `server` brings, and how long it took.
    func ask(_ server: TinyServer, path: String = CloudClient.Path.status, body: PlistValue? = nil, timeout: Duration = .seconds(60)) async -> (
        Result<PlistValue, any Error>, Duration
    ) {
        let endpoint = CloudEndpoint(location: ServerLocation(host: "127.0.0.1", port: server.port, pid: 0), secret: "s3cret")
        let start = ContinuousClock.now
        let result = await Result(catching: { try await CloudClient.request(endpoint, path: path, body: body, timeout: timeout) })
        return (result, ContinuousClock.now - start)
    }

    func failure(_ result: Result<PlistValue, any Error>) -> CloudClientError? {
        guard case .failure(let error) = result else { return nil }
        return error as? CloudClientError
    }

    @Test func aReplyIsDecodedAndTheRequestCarriesTheSecretAndItsLength() async throws {
        let heard = Heard()
        let server = try TinyServer { connection in
            heard.text = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{\"ok\": true}")
        }
        let (result, _) = await ask(server, path: "/v1/faults/iPhone", body: .dictionary(["latency": .integer(5)]))
        #expect(try result.get() == .dictionary(["ok": .bool(true)]))
        let request = heard.text
        #expect(request.hasPrefix("POST /v1/faults/iPhone HTTP/1.1\r\n"), "\(request)")
        #expect(request.contains("\r\nAuthorization: Bearer s3cret\r\n"))
        #expect(request.contains("\r\nConnection: close\r\n"))
        let body = try #require(request.components(separatedBy: "\r\n\r\n").last)
        #expect(request.contains("\r\nContent-Length: \(body.utf8.count)\r\n"))
        #expect(try PlistJSON.decode(PlistJSON.parse(body)) == .dictionary(["latency": .integer(5)]))
    }

    @Test func aRefusalKeepsItsStatusAndSaysTheCloudsError() async throws {
        let server = try TinyServer { connection in
            _ = connection.readRequest()
            let body = #"{"error": "unauthorized"}"#
            connection.write("HTTP/1.1 401 Unauthorized\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        }
        let (result, _) = await ask(server)
        let failure = try #require(self.failure(result))
        #expect(failure.status == 401)
        guard case .at(_, .answered(status: 401, said: "unauthorized")) = failure else {
            Issue.record("\(failure)")
            return
        }
        #expect(failure.description.contains("answered 401: unauthorized"), "\(failure)")
    }

    @Test func aServerThatNeverAnswersCostsTheTimeLimitAndNoMore() async throws {
        let server = try TinyServer { connection in
            _ = connection.readRequest()
            connection.hold(for: .seconds(300))
        }
        let (result, took) = await ask(server, timeout: .milliseconds(500))
        let failure = try #require(self.failure(result))
        // The words say the time limit ended it; the bound (far below the server's 300 s hold, far above 0.5 s on a starved machine) that it did not wait for the server.
        #expect(failure.description.contains("did not answer /v1/status within"), "\(failure)")
        #expect(took < .seconds(120))
    }

    /// A stopped (SIGSTOP) cloud: its kernel completes the connection, and nothing reads it.
    @Test func aServerThatNeverAcceptsCostsTheTimeLimitAndNoMore() async throws {
        let server = try TinyServer(accepting: false) { _ in }
        let (result, took) = await ask(server, timeout: .milliseconds(500))
        let failure = try #require(self.failure(result))
        #expect(failure.description.contains("did not answer"), "\(failure)")
        #expect(took < .seconds(120), "a hang, not the time limit")
    }

    @Test func nothingListeningIsARefusedConnection() async throws {
        let server = try TinyServer(accepting: false) { _ in }
        server.stop()
        let (result, took) = await ask(server)
        let failure = try #require(self.failure(result))
        #expect(failure.description.contains("refused the connection"), "\(failure)")
        #expect(took < .seconds(120), "a hang, not a refusal")
    }

    @Test func aServerThatAnswersForeverStopsAtTheLargestReply() async throws {
        let server = try TinyServer { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            connection.writeForever("[1, 2, 3, 4, 5, 6, 7]")
        }
        let (result, _) = await ask(server, timeout: .seconds(120))
        let failure = try #require(self.failure(result))
        #expect(failure.description.contains("longer than \(HTTPExchange.maximumReplyBytes) bytes"), "\(failure)")
    }

    @Test func aHeadThatNeverEndsStopsAtTheLargestHead() async throws {
        let server = try TinyServer { connection in
            _ = connection.readRequest()
            connection.write("HTTP/1.1 200 OK\r\nX-Padding: ")
            connection.writeForever("a")
        }
        let (result, _) = await ask(server)
        let failure = try #require(self.failure(result))
        #expect(failure.description.contains("reply head longer than \(HTTPExchange.maximumHeadBytes) bytes"), "\(failure)")
    }

    @Test(arguments: [
        ("SSH-2.0-OpenSSH_9.6\r\n\r\n", "its status line is"),
        ("HTTP/1.1 2000 OK\r\n\r\n", "no status from 100 to 599"),
        ("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "a header line is"),
        ("HTTP/1.1 200 OK\r\nX: a\u{0}b\r\n\r\n", "control character"),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "not a byte count"),
        ("HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n", "not a byte count"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", "not a byte count"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999999\r\n\r\n", "more than the"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\n", "more than the"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "two Content-Length headers"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "Transfer-Encoding"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\": 1}", "after 8 of the 100 bytes"),
        ("HTTP/1.1 200 OK\r\nContent-Le", "before its reply's head was whole"),
        ("", "closed the connection without answering"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "not JSON"),
    ])
    func aMalformedOrCutReplyIsAClearError(reply: String, says: String) async throws {
        let server = try TinyServer { connection in
            _ = connection.readRequest()
            connection.write(reply)
        }
        let (result, took) = await ask(server)
        let failure = try #require(self.failure(result), "\(result)")
        #expect(failure.description.hasPrefix("the cloud at http://127.0.0.1:\(server.port) "), "\(failure)")
        #expect(failure.description.contains(says), "\(failure)")
        #expect(took < .seconds(120), "a hang, not an answer read to its end")
    }

    @Test func aPathOrSecretThatWouldBreakTheHeadIsNotSent() async throws {
        let server = try TinyServer(accepting: false) { _ in }
        let (result, _) = await ask(server, path: "/v1/status HTTP/1.1\r\nX-Injected: 1")
        #expect(try #require(self.failure(result)).description.contains("cannot be asked for"))
        let endpoint = CloudEndpoint(location: ServerLocation(host: "127.0.0.1", port: server.port, pid: 0), secret: "a\r\nb")
        let secret = await Result(catching: { try await CloudClient.request(endpoint, path: CloudClient.Path.status) })
        #expect(try #require(self.failure(secret)).description.contains("cannot be sent this secret"))
    }

    @Test func aCancelledRequestStopsWaiting() async throws {
        let server = try TinyServer { connection in
            _ = connection.readRequest()
            connection.hold(for: .seconds(300))
        }
        let endpoint = CloudEndpoint(location: ServerLocation(host: "127.0.0.1", port: server.port, pid: 0), secret: "s3cret")
        let start = ContinuousClock.now
        let task = Task { try await CloudClient.request(endpoint, path: CloudClient.Path.status, timeout: .seconds(600)) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        // Only the cancellation can end it within the suite's time limit: the server holds 300 s, the request waits 600.
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(120))
    }

    /// The reader alone, a byte at a time: the reply is the same however the bytes come.
    @Test func aReplyReadAByteAtATimeIsTheSame() throws {
        var reader = HTTPReplyReader(maximumHeadBytes: 1024, maximumBodyBytes: 1024)
        let bytes = Array("HTTP/1.0 404 Not Found\r\ncontent-length:  7 \r\n\r\n{\"a\":1}trailing".utf8)
        var reply: HTTPReply?
        for byte in bytes where reply == nil { reply = try reader.take([byte]) }
        #expect(reply == HTTPReply(status: 404, body: Array("{\"a\":1}".utf8)))
    }
}

// MARK: - A tiny server

/// One connection's worth of server on 127.0.0.1, on a thread of its own;
/// every wait in it is bounded, so a test that fails never leaves it running long.
/// Unchecked Sendable: `socket` is closed once, by `stop` or `deinit`, under `lock`.
final class TinyServer: @unchecked Sendable {
    let port: Int
    private let lock = NSLock()
    private var socket: Int32

    /// Listens; when `accepting`, takes one connection and hands it to `serve`.
    init(accepting: Bool = true, _ serve: @escaping @Sendable (Connection) -> Void) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound, listen(socket, 4) == 0 else {
            close(socket)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        self.socket = socket
        self.port = Int(UInt16(bigEndian: address.sin_port))
        guard accepting else { return }
        Thread {
            var waiting = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 10_000) > 0 else { return }
            let accepted = accept(socket, nil, nil)
            guard accepted >= 0 else { return }
            serve(Connection(socket: accepted))
            close(accepted)
        }.start()
    }

    func stop() {
        lock.withLock {
            if socket >= 0 { close(socket) }
            socket = -1
        }
    }

    deinit { stop() }

    struct Connection {
        let socket: Int32

        /// The request's head and its body (by its Content-Length), within five seconds.
        func readRequest() -> String {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline, bytes.count < 1 << 20 {
                let text = String(decoding: bytes, as: UTF8.self)
                if let end = text.range(of: "\r\n\r\n") {
                    let length =
                        text.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if text[end.upperBound...].utf8.count >= length { return text }
                }
                var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 100) >= 0 else { break }
                guard ready.revents != 0 else { continue }
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                bytes += chunk[..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Writes all of `text`, or as much as the peer takes before it closes.
        @discardableResult
        func write(_ text: String) -> Bool {
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let sent = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return false }
                bytes = bytes.dropFirst(sent)
            }
            return true
        }

        /// Writes `text` again and again until the peer closes, for at most thirty seconds.
        func writeForever(_ text: String) {
            let block = String(repeating: text, count: max(1, 16_384 / max(1, text.utf8.count)))
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, write(block) {}
        }

        /// Keeps the connection open, saying nothing.
        func hold(for duration: Duration) {
            var hangUp = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&hangUp, 1, Int32(duration.components.seconds * 1000))
        }
    }
}

/// What the server heard, for the test to read once the request is answered.
/// Unchecked Sendable: `text` is touched only under `lock`.
final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var value = ""
    var text: String {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
