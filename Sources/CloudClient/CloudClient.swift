import CloudModel
import Foundation
import Guarded
import PropertyList

/// One JSON request to the cloud's HTTP face (the CLI and the scenario
/// runner use it; people use curl). HTTP/1.1 over a plain TCP socket, one
/// request per connection (`HTTPExchange`): no NIO, so what depends on the
/// client (the runner, GroupSimTesting) does not build the server's stack.
package enum CloudClient {
    /// The longest a connection may take to open, within the request's `timeout`.
    static let connectTimeout = Duration.seconds(2)

    /// `GET` (body nil) or `POST` a JSON body with the endpoint's secret;
    /// returns the decoded reply, or throws the cloud's error text, or that it
    /// did not answer within `timeout` (a stopped cloud must not hang the CLI or the runner).
    package static func request(_ endpoint: CloudEndpoint, path: String, body: PlistValue? = nil, timeout: Duration = .seconds(10)) async throws
        -> PlistValue
    {
        let location = endpoint.location
        let exchange = HTTPExchange(
            host: location.host, port: location.port, hostHeader: location.address.hostAndPort, path: path, secret: endpoint.secret,
            body: body.map { Array(PlistJSON.encode($0).utf8) })
        do {
            let reply = try await exchange.perform(timeout: timeout, connectTimeout: connectTimeout)
            return try decode(reply, path: path)
        } catch let problem as CloudClientError {
            throw CloudClientError.at(url: location.url, problem)
        }
    }

    /// The reply's JSON if the cloud answered 200; its `error` text (or its
    /// first bytes, when it is not JSON) with the status otherwise.
    static func decode(_ reply: HTTPReply, path: String) throws(CloudClientError) -> PlistValue {
        let text = String(decoding: reply.body, as: UTF8.self)
        let value = Result { () throws -> PlistValue in try PlistJSON.decode(PlistJSON.parse(reply.body), path: "reply") }
        guard reply.status == 200 else {
            let said = (try? value.get())?.dictionaryValue?["error"]?.stringValue ?? CloudFormatError.brief(text)
            throw .answered(status: reply.status, said: said)
        }
        do {
            return try value.get()
        } catch {
            throw .notJSON(path: path, status: reply.status, reason: "\(error)")
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
        let outcome = LockedCondition<Result<T, any Error>?>(nil)
        Task(executorPreference: blockingExecutor) {
            let result = await Result(catching: body)
            outcome.withLock { $0 = result }
        }
        return try outcome.wait(atMost: nil, for: { $0 })!.get()
    }

    /// The thread `blocking` runs its tasks on, for the process's life.
    private static let blockingExecutor = OwnThreadExecutor(name: "groupsim.cloud-client")
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
