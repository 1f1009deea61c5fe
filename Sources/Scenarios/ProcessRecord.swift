import AppProtocol
import ChildProcess
import Foundation
import Guarded
import PropertyList
import ScenarioModel

/// What the runner records of one process: its events, the responses to its
/// requests, its output (bounded) and its end. The child's reader threads
/// (stdout, stderr, the control channel) hand it each line; the steps wait on it.
/// It holds no thread or descriptor of its own, so the readers never keep the driver alive.
/// Unchecked Sendable: `state` is reached only through its lock; the rest is set in `init`.
final class ProcessRecord: @unchecked Sendable {
    struct State {
        var events: [RecordedEvent] = []
        var responses: [Int: RecordedEvent] = [:]
        var nextID = 0
        /// Burst bookkeeping: synchronize request id → the burst writes it covers.
        var pendingSyncs: [Int: [(key: String, value: PlistValue)]] = [:]
        var acknowledged: [(key: String, value: PlistValue)] = []
        var acknowledgedSyncs = 0
        var suspended = false
        /// The child ended and both its streams were read to the end.
        var finished = false
        var exitStatus: Int32?
        /// A control channel was attached (its lines come on a reader of their own, after or before the child's end).
        var channelAttached = false
        var channelClosed = false
        var output = OutputBuffer()
        /// Output lines recorded in the run's log (its reports): the first ones, at most `OutputBuffer.maximumLines` and `maximumBytes`.
        var loggedOutput = 0
        var loggedBytes = 0
        /// Whether failure messages show the last output lines (a user's executable's).
        var showsOutput = false

        /// The child ended and everything it said was read: its streams and, if it had one, its control channel.
        /// The channel's reader is not the streams', so a one-shot's `ready` or last answer may be read after
        /// its end: what it said before it exited is judged only once this holds.
        var ended: Bool { finished && (!channelAttached || channelClosed) }

        /// The last output lines, for a failure message ("" when there are none to show).
        var lastLines: String {
            guard showsOutput else { return "" }
            let shown = output.lines.suffix(10)
            guard !shown.isEmpty else { return "; it wrote no output" }
            let dropped = output.dropped > 0 ? ", \(output.dropped) earlier ones dropped" : ""
            return "; its last lines (\(shown.count) of \(output.total)\(dropped)):"
                + shown.map { "\n        [\($0.stream.rawValue)] \(Self.shortened($0.text))" }.joined()
        }

        /// A line as a failure message shows it: at most 300 characters.
        static func shortened(_ text: String) -> String {
            text.count <= 300 ? text : text.prefix(300) + " … (\(text.utf8.count) bytes)"
        }
    }

    enum Progress<T> {
        case waiting
        case done(T)
        case failed(String)
    }

    let name: String
    let log: ScenarioLog
    private let state: LockedCondition<State>

    /// `logsOutput`: the output lines go to the run's log as `output` events (a lane of the timeline).
    init(name: String, log: ScenarioLog, logsOutput: Bool) {
        self.name = name
        self.log = log
        state = LockedCondition(State(showsOutput: logsOutput))
    }

    func withLock<T>(_ body: (inout State) -> T) -> T {
        state.withLock(body)
    }

    /// A change a wait may be waiting for (every `withLock` wakes the waiters; the name says why this one is made).
    private func changed<T>(_ body: (inout State) -> T) -> T {
        state.withLock(body)
    }

    /// Waits until `check` is done or failed (a failure throws), at most `timeout` seconds (then `timedOut`'s text).
    func wait<T>(timeout: Double, until check: (State) -> Progress<T>, timedOut: (State) -> String) throws -> T {
        let outcome = log.clock.wait(on: state, atMost: timeout) { state -> Result<T, ScenarioRunError>? in
            switch check(state) {
            case .done(let result): .success(result)
            case .failed(let message): .failure(ScenarioRunError.check(message))
            case .waiting: nil
            }
        } timedOut: {
            .failure(ScenarioRunError.check(timedOut($0)))
        }
        return try outcome.get()
    }

    /// A new request id; `covering`: the burst writes a synchronize with this id acknowledges.
    func nextRequestID(covering writes: [(key: String, value: PlistValue)]? = nil) -> Int {
        withLock { state in
            state.nextID += 1
            if let writes { state.pendingSyncs[state.nextID] = writes }
            return state.nextID
        }
    }

    /// A line where the process speaks the protocol; anything else there is output.
    func receiveProtocol(_ line: String) {
        guard let decoded = try? ControlProtocol.decode(line) else {
            if withLock({ $0.showsOutput }) { return receiveOutput(line, stream: .stdout) }
            log.record(process: name, kind: .stderr, name: "output", text: line)
            return changed { $0.output.append(line, stream: .stdout, time: log.now) }
        }
        changed { state in
            switch decoded.message {
            case .response(let response):
                let event = log.record(
                    process: name, kind: .response, name: "response", fields: decoded.fields,
                    text: response.ok ? "ok" : "error: \(response.error ?? "?")")
                if let id = response.id.flatMap({ Int(exactly: $0) }) {
                    state.responses[id] = event
                    if let covered = state.pendingSyncs.removeValue(forKey: id), response.ok {
                        state.acknowledged += covered
                        state.acknowledgedSyncs += 1
                    }
                }
            case .event(let appEvent, _):
                // A user's program stamps its events on the clock output lines are stamped with as they come: the
                // reports put them in order (an observer's delivery before the line it printed).
                state.events.append(
                    log.record(
                        process: name, kind: .event, name: appEvent.name, fields: decoded.fields,
                        text: ProcessDriver.describe(appEvent), appEvent: appEvent,
                        began: Self.stamp(decoded.fields["monotonicNs"])))
            }
        }
    }

    /// An event's `monotonicNs`, if it carries a usable one.
    private static func stamp(_ field: PlistValue?) -> UInt64? {
        guard case .integer(let value)? = field else { return nil }
        return UInt64(exactly: value)
    }

    /// A line of plain output (a user's executable's stdout, any process's stderr).
    func receiveOutput(_ line: String, stream: OutputLine.Stream) {
        changed { state in
            let time = log.now
            state.output.append(line, stream: stream, time: time)
            guard state.showsOutput, state.loggedOutput < OutputBuffer.maximumLines, state.loggedBytes < OutputBuffer.maximumBytes else { return }
            let kept = state.output.lines.last?.text ?? line
            state.loggedOutput += 1
            state.loggedBytes += kept.utf8.count
            log.record(process: name, kind: .output, name: "output", fields: ["stream": .string(stream.rawValue)], text: kept)
        }
    }

    func channelClosed() {
        changed { $0.channelClosed = true }
        log.record(process: name, kind: .action, name: "channel-closed", text: "closed its control channel")
    }

    /// The child's end, after the last line of its streams.
    func finish(_ termination: RunningProcess.Termination?) {
        // A death by signal reads as a shell shows it: 128 + the signal (137 for KILL).
        let status = termination?.shellStatus
        changed { state in
            let unlogged = state.output.total - state.loggedOutput
            if state.showsOutput, unlogged > 0 {
                log.record(
                    process: name, kind: .output, name: "output", fields: ["stream": .string("note")],
                    text: "(\(unlogged) more output lines are not in the report, which holds the first \(OutputBuffer.maximumLines) or 1 MiB)")
            }
            state.finished = true
            state.exitStatus = status
            log.record(
                process: name, kind: .exit, name: "exit", fields: ["status": .integer(Int64(status ?? -1))],
                text: "exited with status \(status.map(String.init) ?? "?")", appEvent: .exit(status: status ?? -1))
        }
    }
}

/// One line a process wrote, as the runner (and GroupSimTesting) keeps it.
package struct OutputLine: Sendable {
    package enum Stream: String, Sendable { case stdout, stderr }
    /// Its number among all the lines the process wrote (dropped ones included).
    package let sequence: Int
    package let stream: Stream
    package let text: String
    package let time: UInt64
}

/// The last lines of a process's output: at most `maximumLines` lines and
/// `maximumBytes` bytes (a line longer than `maximumLineBytes` is cut), and
/// how many were dropped, so a process flooding its output costs bounded memory.
package struct OutputBuffer {
    package static let maximumLines = 2_000
    package static let maximumBytes = 1 << 20
    package static let maximumLineBytes = 64 << 10

    private var storage: [OutputLine] = []
    /// The first kept line of `storage`; the ones before it were dropped and are removed in batches.
    private var head = 0
    private var bytes = 0
    package private(set) var dropped = 0
    package private(set) var total = 0

    package init() {}

    package var lines: ArraySlice<OutputLine> { storage[head...] }

    package mutating func append(_ line: String, stream: OutputLine.Stream, time: UInt64) {
        var text = line
        if text.utf8.count > Self.maximumLineBytes {
            text = String(decoding: text.utf8.prefix(Self.maximumLineBytes), as: UTF8.self) + " … (line cut at \(Self.maximumLineBytes) bytes)"
        }
        storage.append(OutputLine(sequence: total, stream: stream, text: text, time: time))
        total += 1
        bytes += text.utf8.count
        while storage.count - head > Self.maximumLines || bytes > Self.maximumBytes {
            bytes -= storage[head].text.utf8.count
            head += 1
            dropped += 1
        }
        if head >= Self.maximumLines {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// The line as a recorded event, for waits and checks.
    func event(_ line: OutputLine, process: String) -> RecordedEvent {
        RecordedEvent(
            time: line.time, process: process, kind: .output, name: "output", fields: ["stream": .string(line.stream.rawValue)],
            text: line.text, appEvent: nil)
    }
}

/// An `output` matcher, its pattern compiled once for a wait or a check.
struct OutputMatcher {
    let regex: NSRegularExpression
    let stream: OutputLine.Stream?

    /// Nil unless `matcher` is about output (its pattern was checked when the file was read).
    init?(_ matcher: EventMatcher) {
        guard matcher.event == "output", let pattern = matcher.pattern, let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        self.regex = regex
        stream = matcher.stream.flatMap(OutputLine.Stream.init(rawValue:))
    }

    init(regex: NSRegularExpression, stream: OutputLine.Stream?) {
        self.regex = regex
        self.stream = stream
    }

    func matches(_ line: OutputLine) -> Bool {
        if let stream, line.stream != stream { return false }
        return regex.firstMatch(in: line.text, range: NSRange(line.text.startIndex..., in: line.text)) != nil
    }
}
