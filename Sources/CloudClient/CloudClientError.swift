import CloudModel
import Foundation
import Glibc

/// What fails in asking the cloud: `at(url, problem)` says which cloud and
/// what went wrong (an HTTP exchange's problems are said of the server,
/// "did not answer …"), with the status, path, errno or bound involved.
/// `description` is the one place these become text.
package indirect enum CloudClientError: Error, CustomStringConvertible {
    /// The cloud at `url` (`http://HOST:PORT`), and what went wrong with it.
    case at(url: String, CloudClientError)
    /// It answered `status`, not 200; `said`: its `error` text or the reply's first bytes.
    case answered(status: UInt, said: String)
    /// It answered 200 with a body that is not JSON.
    case notJSON(path: String, status: UInt, reason: String)
    /// A path that would break the request's head.
    case unsendablePath(String)
    /// A secret that would break the request's head.
    case unsendableSecret
    case noAnswer(path: String, within: Duration)
    case noConnection(path: String, within: Duration)
    /// It closed the connection before the request was sent whole (`errno` from send).
    case closedBeforeRequest(path: String, errno: Int32)
    /// getaddrinfo's `code` for a host it does not know.
    case unknownHost(code: Int32)
    case refused(errno: Int32)
    case brokeConnection(path: String, errno: Int32)
    case pollFailed(errno: Int32)
    case headTooLong(limit: Int)
    case replyTooLong(limit: Int)
    /// Closed after `received` bytes of a head that never ended (0: no answer at all).
    case closedBeforeHead(received: Int)
    case closedBeforeBody(received: Int, length: Int)
    /// A reply head that is not HTTP/1.1: `why`.
    case notHTTP(why: String)
    case contentLengthTooLarge(value: String, limit: Int)

    /// The HTTP status the cloud answered with, if it answered (else 0).
    package var status: UInt {
        switch self {
        case .at(_, let problem): problem.status
        case .answered(let status, _), .notJSON(_, let status, _): status
        default: 0
        }
    }

    package var description: String {
        let stopped = "(is it stopped? `groupsim cloud status`)"
        return switch self {
        case .at(let url, let problem): "the cloud at \(url) \(problem)"
        case .answered(let status, let said):
            // A refusal says nothing of why: the cloud's log does.
            "answered \(status): \(said)" + (status == 401 ? " (this root's control secret is not the cloud's; its log says why)" : "")
        case .notJSON(let path, _, let reason): "answered \(path) with what is not JSON: \(reason)"
        case .unsendablePath(let path): "cannot be asked for \(CloudFormatError.brief(path)): a path is ASCII, from /, without spaces"
        case .unsendableSecret: "cannot be sent this secret: a control secret is ASCII without spaces"
        case .noAnswer(let path, let within): "did not answer \(path) within \(within) \(stopped)"
        case .noConnection(let path, let within): "did not answer \(path): no connection within \(within) \(stopped)"
        case .closedBeforeRequest(let path, let errno): "closed the connection before taking the request to \(path) (\(Self.reason(errno)))"
        case .unknownHost(let code): "cannot be reached: its host is not known (\(String(cString: gai_strerror(code))))"
        case .refused(let errno): "refused the connection (\(Self.reason(errno))); is it running? `groupsim cloud status`"
        case .brokeConnection(let path, let errno): "broke the connection before its reply to \(path) was whole (\(Self.reason(errno)))"
        case .pollFailed(let errno): "could not be waited for (poll: \(Self.reason(errno)))"
        case .headTooLong(let limit): "sent a reply head longer than \(limit) bytes"
        case .replyTooLong(let limit): "sent a reply longer than \(limit) bytes, the most read"
        case .closedBeforeHead(let received):
            received == 0
                ? "closed the connection without answering" : "closed the connection before its reply's head was whole (\(received) bytes)"
        case .closedBeforeBody(let received, let length): "closed the connection after \(received) of the \(length) bytes its Content-Length promised"
        case .notHTTP(let why): "sent a reply that is not HTTP/1.1: \(why)"
        case .contentLengthTooLarge(let value, let limit):
            "sent a Content-Length of \(CloudFormatError.brief(value)) bytes, more than the \(limit) read"
        }
    }

    private static func reason(_ errno: Int32) -> String { String(cString: strerror(errno)) }
}
