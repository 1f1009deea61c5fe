import CloudModel
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PropertyList

/// One JSON request to the cloud's HTTP face (the CLI and the scenario
/// runner use it; people use curl).
package enum CloudClient {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        /// The HTTP status the cloud answered with, if it answered.
        package var status: UInt = 0
    }

    /// `GET` (body nil) or `POST` a JSON body with the endpoint's secret;
    /// returns the decoded reply, or throws the cloud's error text, or that it
    /// did not answer within `timeout` (a stopped cloud must not hang the CLI or the runner).
    package static func request(_ endpoint: CloudEndpoint, path: String, body: PlistValue? = nil, timeout: Duration = .seconds(10)) async throws
        -> PlistValue
    {
        let location = endpoint.location
        return try await withThrowingTaskGroup(of: PlistValue?.self) { group in
            group.addTask { try await exchange(location, secret: endpoint.secret, path: path, body: body) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let reply = first else {
                throw Failure(
                    description: "the cloud at \(location.url) did not answer \(path) within \(timeout) (is it stopped? `groupsim cloud status`)")
            }
            return reply
        }
    }

    private static func exchange(_ location: ServerLocation, secret: String, path: String, body: PlistValue?) async throws -> PlistValue {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(2))
            .connect(host: location.host, port: location.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            let payload = body.map { ByteBuffer(string: PlistJSON.encode($0)) }
            var headers = HTTPHeaders()
            headers.add(name: "Host", value: location.address.hostAndPort)
            headers.add(name: "Content-Length", value: String(payload?.readableBytes ?? 0))
            headers.add(name: "Authorization", value: "Bearer \(secret)")
            if payload != nil { headers.add(name: "Content-Type", value: "application/json") }
            // One write: the cloud answers and closes as soon as it has the request, and a
            // second write could then meet a closed connection.
            var parts: [HTTPClientRequestPart] = [
                .head(HTTPRequestHead(version: .http1_1, method: body == nil ? .GET : .POST, uri: path, headers: headers))
            ]
            if let payload { parts.append(.body(.byteBuffer(payload))) }
            parts.append(.end(nil))
            try await outbound.write(contentsOf: parts)
            var status = HTTPResponseStatus.ok
            var reply = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let head): status = head.status
                case .body(var chunk): reply.writeBuffer(&chunk)
                case .end: break
                }
            }
            let value = try PlistJSON.decode(PlistJSON.parse(String(buffer: reply)), path: "reply")
            guard status == .ok else {
                // A refusal says nothing of why: the cloud's log does.
                let why = status == .unauthorized ? " (this root's control secret is not the cloud's; its log says why)" : ""
                throw Failure(
                    description:
                        "the cloud at \(location.url) answered \(status.code): \(value.dictionaryValue?["error"]?.stringValue ?? String(buffer: reply))"
                        + why,
                    status: status.code)
            }
            return value
        }
    }

    /// The HTTP face's paths, each name percent-encoded as one path segment.
    package enum Path {
        package static let status = "/v1/status"
        package static func account(_ account: String) -> String { "/v1/accounts/\(segment(account))" }
        package static func store(_ store: String, of account: String) -> String {
            "/v1/accounts/\(segment(account))/stores/\(segment(store))"
        }
        package static func faults(_ device: String) -> String { "/v1/faults/\(segment(device))" }

        static func segment(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
        }
    }

    /// Runs `body` to completion from synchronous code (the command-line
    /// tools, the runner, tests). The body and its child tasks run on a
    /// thread of `CloudClient`'s own, never on the cooperative pool: a caller
    /// that waits here may itself hold a pool thread, and callers holding
    /// all of them would otherwise wait for ever for a task that needs one.
    package static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: blockingExecutor) {
            box.result = await Result(catching: body)
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    /// The thread `blocking` runs its tasks on, for the process's life.
    private static let blockingExecutor = OwnThreadExecutor(name: "groupsim.cloud-client")
}

/// Unchecked Sendable: the task writes `result` once, before it signals the semaphore the reader waits on.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
