import AppProtocol
import ChildProcess
import Foundation
import Guarded
import PropertyList
import Scenarios

/// Which of a program's output streams an output wait reads.
public enum StandardStream: Sendable, Equatable {
    case standardOutput, standardError
    /// A line of either stream.
    case either

    var streams: [OutputLine.Stream] {
        switch self {
        case .standardOutput: [.stdout]
        case .standardError: [.stderr]
        case .either: [.stdout, .stderr]
        }
    }

    var description: String {
        switch self {
        case .standardOutput: "standard output"
        case .standardError: "standard error"
        case .either: "standard output or error"
        }
    }
}

/// What a launched program said: the events of its control channel (read by
/// one thread that owns the reading until the channel closes) and the last
/// lines of its output (bounded as the runner bounds them, `OutputBuffer`,
/// handed over by its `RunningProcess`'s readers), waited on by the test's calls.
/// Unchecked Sendable: every stored property is under `condition`'s lock (each `withLock` wakes the waits).
final class ProgramRecord: @unchecked Sendable {
    private let condition = LockedCondition()
    private var recorded: [AppEvent] = []
    private var responses: [Int64: ProtocolResponse] = [:]
    /// Indices in `recorded` of the events a wait has taken (each is returned once).
    private var taken = Set<Int>()
    private var channelClosed = false
    private var lastID: Int64 = 0
    private var output = OutputBuffer()
    /// Per stream, the sequence number of the first line no output wait has consumed.
    private var outputCursor: [OutputLine.Stream: Int] = [.stdout: 0, .stderr: 0]
    /// Both streams were read to their end and the program ended.
    private var outputEnded = false
    /// Stopped by `suspend()` and not resumed since: it cannot answer.
    private var suspended = false

    enum Answer: Sendable {
        case answered(ProtocolResponse)
        case closed, timedOut
        /// Not sent: the channel was closed already.
        case unsent
    }

    /// The handlers that hand this record the program's lines and its end.
    var handlers: RunningProcess.Handlers {
        RunningProcess.Handlers(
            stdout: { [self] in receive($0, from: .stdout) }, stderr: { [self] in receive($0, from: .stderr) },
            ended: { [self] _ in
                condition.withLock { outputEnded = true }
            })
    }

    /// Starts the thread that reads the program's control channel until it closes.
    func attach(_ connection: LineConnection, pid: Int32) {
        let reader = Thread { [self] in
            while let line = try? connection.nextLine(timeout: 365 * 86_400) {
                guard let decoded = try? ControlProtocol.decode(line) else { continue }
                condition.withLock {
                    switch decoded.message {
                    case .event(let event, _): recorded.append(event)
                    case .response(let response): if let id = response.id { responses[id] = response }
                    }
                }
            }
            condition.withLock { channelClosed = true }
        }
        reader.name = "groupsim.testing.channel-\(pid)"
        reader.start()
    }

    private func receive(_ line: String, from stream: OutputLine.Stream) {
        condition.withLock { output.append(line, stream: stream, time: DispatchTime.now().uptimeNanoseconds) }
    }

    var events: [AppEvent] { condition.withLock { recorded } }

    /// Whether the control channel has closed: every event the program sent is in `events`.
    var isChannelClosed: Bool { condition.withLock { channelClosed } }

    var isSuspended: Bool {
        get { condition.withLock { suspended } }
        set { condition.withLock { suspended = newValue } }
    }

    func nextRequestID() -> Int64 {
        condition.withLock {
            lastID += 1
            return lastID
        }
    }

    /// The `ready` event's info; nil if the channel closed or `timeout` passed first.
    func waitForReady(timeout: Double) -> [String: PlistValue]? {
        var info: [String: PlistValue]?
        _ = condition.wait(atMost: timeout) {
            info = recorded.lazy.compactMap { if case .ready(let info) = $0 { info } else { nil } }.first
            return info != nil || channelClosed
        }
        return info
    }

    func takeResponse(_ id: Int64, timeout: Double) -> Answer {
        condition.wait(atMost: timeout) { _ -> Answer? in
            if let response = responses.removeValue(forKey: id) { return .answered(response) }
            return channelClosed ? .closed : nil
        } timedOut: { _ in
            .timedOut
        }
    }

    /// The first event not taken before that `matches` turns into a result,
    /// waiting up to `timeout` for it (a negative wait is the same wait, hoping
    /// for nothing); nil if none came before the deadline or the channel closed.
    func takeEvent<T>(timeout: Double, matching matches: (AppEvent) -> T?) -> (found: T?, closed: Bool) {
        var found: T?
        var closed = false
        _ = condition.wait(atMost: timeout) {
            closed = channelClosed
            for (index, event) in recorded.enumerated() where !taken.contains(index) {
                guard let result = matches(event) else { continue }
                taken.insert(index)
                found = result
                return true
            }
            return channelClosed
        }
        return (found, closed)
    }

    // MARK: Output

    /// The kept lines (the last `OutputBuffer.maximumLines` or `maximumBytes`), how many were dropped before them, and all.
    var keptOutput: (lines: [OutputLine], dropped: Int, total: Int) {
        condition.withLock { (Array(output.lines), output.dropped, output.total) }
    }

    /// Waits up to `timeout` until the program's output was read to its end
    /// (a program that left a child holding its streams keeps them open).
    func waitForOutputEnd(timeout: Double) {
        _ = condition.wait(atMost: timeout) { outputEnded }
    }

    /// The kept lines of `stream`.
    func lines(of stream: OutputLine.Stream) -> [String] {
        condition.withLock { output.lines.filter { $0.stream == stream }.map(\.text) }
    }

    /// The kept lines of standard error, each with its newline.
    var standardError: String { lines(of: .stderr).map { $0 + "\n" }.joined() }

    /// The first line of `stream` that no wait consumed and that `matches`,
    /// waiting up to `timeout`; it and the lines before it (of the streams read)
    /// are consumed. Each line is looked at once; nil if none came before the
    /// deadline or the program's output ended.
    func takeLine(of stream: StandardStream, timeout: Double, matching matches: (String) -> Bool) -> String? {
        var looked: [OutputLine.Stream: Int]?  // the cursor as this wait moved it, read under the lock at its first look
        var found: String?
        _ = condition.wait(atMost: timeout) {
            var next = looked ?? outputCursor
            defer { looked = next }
            let lines = output.lines
            guard let first = lines.first?.sequence else { return outputEnded }
            // Lines dropped since the last look are skipped: the buffer keeps the last ones only.
            let from = max(first, stream.streams.map { next[$0] ?? 0 }.min() ?? 0)
            for line in lines[(lines.startIndex + from - first)...] where stream.streams.contains(line.stream) {
                guard line.sequence >= next[line.stream] ?? 0 else { continue }
                next[line.stream] = line.sequence + 1
                guard matches(line.text) else { continue }
                found = line.text
                for name in stream.streams { outputCursor[name] = max(outputCursor[name] ?? 0, line.sequence + 1) }
                return true
            }
            return outputEnded
        }
        return found
    }
}
