import AppModel
import AppProtocol
import ChildProcess
import Foundation
import PropertyList
import ScenarioModel

/// One running process of a scenario, built-in role or user's executable:
/// it sends requests over the control protocol — on the child's stdin and
/// stdout for a built-in role, on the control channel for an executable that
/// links SimulatedFoundation (`attach`) — and records what the child says.
/// The child's readers are `RunningProcess`'s (and the channel's,
/// `LineConnection`'s) threads; they hand each line to the driver's
/// `ProcessRecord`, so a wait never misses an event that arrived early.
/// Unchecked Sendable: `channel` is under `record.condition`; the rest is set in `init`.
final class ProcessDriver: @unchecked Sendable {
    /// Where the control protocol goes.
    enum Transport {
        /// The child's stdin and stdout (the built-in roles).
        case standardStreams
        /// A channel the child connects to (`attach`); its stdout and stderr are plain output.
        case channel
        /// None: the child is only started, signalled, fed stdin and heard on stdout and stderr.
        case none
    }

    let name: String
    let process: any LaunchedProcess
    let log: ScenarioLog
    let transport: Transport
    private let record: ProcessRecord
    private var channel: LineConnection?
    /// How much the record held when a step started: the step before the current one's, and the current one's
    /// (`noteStepStart`; under `record`'s lock). nil: the process began since.
    private var stepStarts: (previous: RecordMark?, current: RecordMark?) = (nil, nil)
    /// Just past the last event (or output line) a `wait` matched (under `record`'s lock).
    private var waitedPast = RecordMark(events: 0, lines: 0)

    private struct RecordMark {
        var events: Int
        var lines: Int
    }

    /// Called as each step of the scenario starts.
    func noteStepStart() {
        record.withLock { state in
            stepStarts = (stepStarts.current, RecordMark(events: state.events.count, lines: state.output.total))
        }
    }

    var exitStatus: Int32? { record.withLock { $0.exitStatus } }
    var suspended: Bool { record.withLock { $0.suspended } }
    var isRunning: Bool { record.withLock { !$0.finished } }

    /// `ownGroup`: a user's program, which may start children of its own: it
    /// leads a process group of its own, which is ended with it (and by
    /// `warden` should the runner be killed first; `RunningProcess`).
    init(
        name: String, executable: String, arguments: [String], environment: [String: String], directory: String? = nil,
        transport: Transport, context: RunContext, ownGroup: Bool = false
    ) throws {
        let log = context.log
        self.name = name
        self.log = log
        self.transport = transport
        let record = ProcessRecord(name: name, log: log, logsOutput: transport != .standardStreams)
        self.record = record
        let protocolOnStdout = transport == .standardStreams
        process = try context.processes.launch(
            ProcessLaunch(
                executable: executable, arguments: arguments, environment: environment, directory: directory,
                // Plain output (not protocol lines) is cut into pieces of a line's bound as it arrives.
                lineLimit: protocolOnStdout ? nil : OutputBuffer.maximumLineBytes, ownGroup: ownGroup, warden: ownGroup ? context.warden : nil),
            handlers: RunningProcess.Handlers(
                stdout: { line in protocolOnStdout ? record.receiveProtocol(line) : record.receiveOutput(line, stream: .stdout) },
                stderr: { line in record.receiveOutput(line, stream: .stderr) },
                ended: { termination in record.finish(termination) }))
    }

    /// The handler of a control channel's lines, given when it is accepted.
    var channelHandler: @Sendable (String?) -> Void {
        { [record] line in
            guard let line else { return record.channelClosed() }
            record.receiveProtocol(line)
        }
    }

    /// The control channel the child connected to (its lines go to `channelHandler`).
    func attach(_ connection: LineConnection) {
        record.withLock { state in
            channel = connection
            state.channelAttached = true
        }
    }

    /// Whether the child's control channel has closed (it exited, or closed it).
    var channelClosed: Bool { record.withLock { $0.channelClosed } }

    /// A short human text for an event, for the log and the failure report.
    static func describe(_ event: AppEvent) -> String {
        func show(_ value: PlistValue?) -> String {
            guard let value else { return "absent" }
            // A large value (a cache of data) would fill the report: its start and its size say enough.
            let text = PlistJSON.encode(value)
            return text.count <= 200 ? text : "\(text.prefix(120))… (\(text.utf8.count) bytes of JSON)"
        }
        switch event {
        case .change(let change): return "change \(change.key): \(show(change.old)) → \(show(change.new)) (\(change.origin))"
        case .render(let card, let reason, let entry):
            let shown = entry.map { "\($0.kind) entry of \(PlistJSON.timestamp($0.date)), " } ?? ""
            return "render (\(shown)\(reason)): " + card.sorted { $0.key < $1.key }.map { "\($0.key)=\(show($0.value))" }.joined(separator: " ")
        case .warning(let kind, let message): return "warning \(kind): \(message)"
        case .error(let message): return "error: \(message)"
        case .intentResult(let intent, let key?, let value, _, _): return "intent \(intent) → \(key) = \(show(value))"
        case .intentResult(let intent, nil, let value, let dialog, _):
            return "intent \(intent) → value \(show(value))" + (dialog.map { ", dialog \(PlistJSON.quote($0))" } ?? "")
        case .exit(let status): return "exit \(status)"
        case .cloudChange(let reason, let keys): return "iCloud \(reason): \(keys.isEmpty ? "no keys" : keys.joined(separator: ", "))"
        case .delivery(let delivery): return delivery.description
        case .ready, .notification: return event.name
        }
    }

    /// Writes a protocol line where the child reads requests.
    private func writeRequest(_ line: String) {
        switch transport {
        case .standardStreams: process.write(line)
        case .channel, .none: record.withLock { _ in channel }?.write(line)
        }
    }

    /// Writes a line to the child's stdin (`send`), waiting at most `timeout`
    /// seconds for the child to take it: one that does not read its stdin (or
    /// is suspended) fails the step once the pipe is full, rather than hang the run.
    func writeInput(_ line: String, timeout: Double) throws {
        let bytes = Data((line + "\n").utf8)
        switch process.write(bytes, within: timeout) {
        case .written: return
        case .closed: throw ScenarioRunError.check("\(name) no longer reads its stdin (it closed it or exited)")
        case .timedOut(let unwritten):
            let why =
                suspended
                ? "it is suspended: resume it before sending to it"
                : "it does not read its stdin, or not as fast: have it read its stdin, or send it less"
            throw ScenarioRunError.check(
                "\(name) did not take the line within \(Int(timeout)) s: \(unwritten) of its \(bytes.count) bytes "
                    + "(with the newline) were not written, as its stdin pipe is full; \(why)\(lastLines)")
        }
    }

    /// Sends a command without waiting; returns its request id.
    @discardableResult
    func send(_ command: AppRequest, suite: String? = nil) -> Int {
        let id = record.nextRequestID()
        writeRequest(ControlProtocol.requestLine(id: id, command, suite: suite))
        return id
    }

    /// Sends a command and waits for its response; an error response fails the step.
    @discardableResult
    /// `suite`: an executable's `UserDefaults(suiteName:)` that answers (nil: its `.standard`).
    func request(_ command: AppRequest, suite: String? = nil, timeout: Double = 10) throws -> RecordedEvent {
        let id = send(command, suite: suite)
        let response = try waitForResponse(id, timeout: timeout)
        guard let answer = response.response, answer.ok else {
            throw ScenarioRunError.check("\(name) answered: \(response.response?.error ?? "error")")
        }
        return response
    }

    func waitForResponse(_ id: Int, timeout: Double) throws -> RecordedEvent {
        try record.wait(timeout: timeout) { state in
            if let response = state.responses[id] { return .done(response) }
            if state.ended {
                return .failed("\(name) exited (status \(state.exitStatus.map(String.init) ?? "?")) before answering\(state.lastLines)")
            }
            if state.channelClosed { return .failed("\(name) closed its control channel before answering\(state.lastLines)") }
            return .waiting
        } timedOut: { state in
            "\(name) did not answer within \(timeout) s\(state.lastLines)"
        }
    }

    /// A request that must end the process (`exits:`): passes once it has ended with `expected.status` and its stderr
    /// (or an `error` event) says `expected.error`. An answer counts for nothing (a program may answer, then end from an
    /// observer on its main queue); one still running at `timeout` fails, as does another status or other words.
    func expectExit(_ expected: ExpectedExit, after id: Int, timeout: Double) throws {
        let status = try record.wait(timeout: timeout) { state in
            state.ended ? .done(state.exitStatus ?? -1) : .waiting
        } timedOut: { state in
            let answer = state.responses[id].map { " (it answered \($0.response?.ok == true ? "ok" : $0.text))" } ?? ""
            return
                "\(name) kept running\(answer) for \(Int(timeout)) s; the step should have ended it with status \(expected.status)\(state.lastLines)"
        }
        guard status == expected.status else {
            throw ScenarioRunError.check("\(name) exited with status \(status), not \(expected.status)\(lastLines)")
        }
        guard let text = expected.error else { return }
        let said =
            standardError + recordedEvents().compactMap { event in if case .error(let message)? = event.appEvent { message } else { nil } }.joined()
        guard said.contains(text) else {
            throw ScenarioRunError.check("\(name) exited with status \(status), but its stderr does not say \"\(text)\"\(lastLines)")
        }
    }

    /// The first event since launch that matches (waiting up to `timeout`);
    /// for `output`, the first kept line that matches.
    func waitFor(_ matcher: EventMatcher, timeout: Double) throws -> RecordedEvent {
        let lines = OutputMatcher(matcher)
        // Each wake-up looks only at the lines that arrived since the last (a flood must not be matched over and over).
        var nextUnchecked = 0
        return try record.wait(timeout: timeout) { state in
            if let lines {
                let fresh = state.output.lines.drop { $0.sequence < nextUnchecked }
                nextUnchecked = state.output.total
                if let match = fresh.first(where: lines.matches) {
                    waitedPast.lines = max(waitedPast.lines, match.sequence + 1)
                    return .done(state.output.event(match, process: name))
                }
            } else if let index = state.events.firstIndex(where: matcher.matches) {
                waitedPast.events = max(waitedPast.events, index + 1)
                return .done(state.events[index])
            }
            guard state.ended else {
                if state.channelClosed, matcher.needsControl, lines == nil {
                    return .failed("\(name) closed its control channel before a \(matcher) event\(state.lastLines)")
                }
                return .waiting
            }
            let status = state.exitStatus ?? -1
            guard matcher.event == "exit" else {
                let what = lines == nil ? "a \(matcher) event" : "an output line matching /\(matcher.pattern ?? "")/"
                return .failed("\(name) exited (status \(status)) before \(what)\(state.lastLines)")
            }
            guard matcher.status == nil || matcher.status == Int(status) else {
                return .failed("\(name) exited with status \(status), not \(matcher.status!)\(state.lastLines)")
            }
            return .done(
                RecordedEvent(
                    time: log.now, process: name, kind: .exit, name: "exit", fields: ["status": .integer(Int64(status))],
                    text: "exit", appEvent: .exit(status: status)))
        } timedOut: { state in
            guard lines != nil else { return "no \(matcher) event in \(name) within \(timeout) s\(state.lastLines)" }
            return
                "no output line matching /\(matcher.pattern ?? "")/\(matcher.stream.map { " on \($0)" } ?? "") in \(name) within \(timeout) s\(state.lastLines)"
        }
    }

    /// Before a check on the events a user's program said: every event it began before now is in. A line it printed
    /// in an observer comes on another pipe than the observer's `delivery`, which is sent once the observer returns;
    /// `flush-events` is answered once every observer called before it came has returned and its event is queued
    /// ahead of the answer, so a check after a wait on that line sees the delivery. Not asked of a program that is
    /// suspended (it could not answer) or whose channel is gone (everything it sent is read).
    func catchUpEvents() throws {
        guard transport == .channel, record.withLock({ $0.channelAttached && !$0.channelClosed && !$0.finished && !$0.suspended }) else {
            return
        }
        do {
            try request(.flushEvents, timeout: RunnerTimeouts.request)
        } catch {
            if !isRunning || channelClosed { return }
            throw ScenarioRunError.check(
                "\(name) did not send the events it began before this check within \(Int(RunnerTimeouts.request)) s "
                    + "(one of its observers has not returned): \(error)\(lastLines)")
        }
    }

    /// Before a check on the process's output: everything it had written when the check began is read and
    /// recorded as lines. A program that wrote a line and then said `ready` (or answered) on its control channel
    /// has the line in its pipe, perhaps not yet read, when the step before the check returns.
    func catchUpOutput() throws {
        guard process.catchUpOutput(timeout: RunnerTimeouts.request) else {
            throw ScenarioRunError.check(
                "the runner did not finish reading what \(name) had written within \(Int(RunnerTimeouts.request)) s: "
                    + "the check cannot see all its output\(lastLines)")
        }
    }

    /// Before a check on what the process said (`saw`, `not saw`): its output, or its events.
    func catchUp(on matcher: EventMatcher) throws {
        if matcher.event == "output" { try catchUpOutput() } else { try catchUpEvents() }
    }

    /// Every event so far that matches (output lines: those kept).
    func seen(_ matcher: EventMatcher) -> [RecordedEvent] {
        record.withLock { state in
            if let lines = OutputMatcher(matcher) { return state.output.lines.filter(lines.matches).map { state.output.event($0, process: name) } }
            return state.events.filter(matcher.matches)
        }
    }

    func recordedEvents() -> [RecordedEvent] { record.withLock { $0.events } }

    /// The output lines kept (the last ones), with how many were dropped before them.
    func keptOutput() -> (lines: [OutputLine], dropped: Int) { record.withLock { (Array($0.output.lines), $0.output.dropped) } }

    /// Its last output lines for a failure message (a user's executable's; "" for a built-in role).
    var lastLines: String { record.withLock { $0.lastLines } }

    /// The stderr lines kept, as text (a failed start's error).
    var standardError: String { keptOutput().lines.filter { $0.stream == .stderr }.map { $0.text + "\n" }.joined() }

    /// Watches for `seconds`: the first event matching that arrived since the
    /// step before this one started (past any a `wait` matched), or arrives
    /// within `seconds` (or the exit, for an exit matcher); nil if none did.
    func firstNew(_ matcher: EventMatcher, within seconds: Double) -> RecordedEvent? {
        let lines = OutputMatcher(matcher)
        // From the start of the step before: what it caused counts however soon it came, even before that step
        // returned (a change seen by another process can arrive before the writer's own answer).
        let (seenEvents, seenLines) = record.withLock { _ in
            (max(stepStarts.previous?.events ?? 0, waitedPast.events), max(stepStarts.previous?.lines ?? 0, waitedPast.lines))
        }
        func match(_ state: ProcessRecord.State) -> RecordedEvent? {
            if let lines {
                return state.output.lines.first { $0.sequence >= seenLines && lines.matches($0) }.map { state.output.event($0, process: name) }
            }
            return state.events[seenEvents...].first(where: matcher.matches)
        }
        return try? record.wait(timeout: seconds) { state in
            if let found = match(state) { return .done(found) }
            return state.ended ? .failed("") : .waiting
        } timedOut: { _ in
            ""
        }
    }

    /// Sends a burst pipelined, with a synchronize every `syncEvery` sets;
    /// `pause` spreads a paced burst's writes (it is given the pace, in ms).
    func startBurst(_ burst: Burst, pause: (Int) throws -> Void) rethrows -> Int {
        var covered: [(key: String, value: PlistValue)] = []
        var lastID = 0
        for index in 0..<burst.count {
            // The pace of a person's taps, not a wait for anything: the writes must be spread over time.
            if let pace = burst.paceMilliseconds, index > 0 { try pause(pace) }
            let key = burst.key(index)
            let value = burst.value(index)
            let request: AppRequest =
                switch (burst.cloud, burst.removes) {
                case (true, true): .cloudRemove(key: key)
                case (true, false): .cloudSet(key: key, value: value)
                case (false, true): .remove(key: key)
                case (false, false): .set(key: key, value: value)
                }
            lastID = send(request)
            // A removal is no value to find on disk after an acknowledged synchronize.
            if !burst.removes { covered.append((key, value)) }
            if let every = burst.syncEvery, (index + 1) % every == 0 || index == burst.count - 1 {
                let id = record.nextRequestID(covering: covered)
                writeRequest(ControlProtocol.requestLine(id: id, .synchronize))
                covered = []
                lastID = id
            }
        }
        return lastID
    }

    func waitForAcknowledgedSyncs(_ count: Int, timeout: Double) throws {
        _ = try record.wait(timeout: timeout) { state -> ProcessRecord.Progress<Void> in
            if state.acknowledgedSyncs >= count { return .done(()) }
            if state.finished { return .failed("\(name) exited after \(state.acknowledgedSyncs) acknowledged synchronizes, before \(count)") }
            return .waiting
        } timedOut: { state in
            "only \(state.acknowledgedSyncs) of \(count) synchronizes acknowledged by \(name) within \(timeout) s"
        }
    }

    func acknowledgedWrites() -> [(key: String, value: PlistValue)] { record.withLock { $0.acknowledged } }

    func signal(_ signal: Int32) {
        // Through the child's owner: once it is reaped, its pid (perhaps another process's by now) is never signalled.
        // A stop is waited for: the next step's request must find the process stopped.
        if signal == SIGSTOP { process.stop(timeout: 10) } else { process.signal(signal) }
        if signal == SIGSTOP { record.withLock { $0.suspended = true } }
        if signal == SIGCONT { record.withLock { $0.suspended = false } }
    }

    /// Waits for the process to exit and everything it said to be read; nil
    /// on timeout. One that exited while its channel stays open (a child that
    /// left its group holds it) is taken as exited once `timeout` has passed.
    func waitForExit(timeout: Double) -> Int32? {
        let status = try? record.wait(timeout: timeout) { state in
            state.ended ? .done(state.exitStatus ?? -1) : .waiting
        } timedOut: { _ in
            ""
        }
        return status ?? record.withLock { $0.finished ? $0.exitStatus ?? -1 : nil }
    }

    /// How long a user's executable without a control channel has to end
    /// after its stdin closed, before SIGTERM (a tool reading to end of input ends on its own).
    static let stdinGrace: Double = 2

    /// Ends the process as its kind ends, waiting up to `timeout` for it: a
    /// built-in role when its stdin closes; a user's executable through
    /// `exit` on its channel (its exit handlers save what it has), or when
    /// its stdin closes, or, `stdinGrace` later, by SIGTERM to it and its
    /// process group (what it started). Once it has ended, what is left of
    /// its group is ended too (`RunningProcess`'s `ownGroup`).
    /// Returns its status, nil if it is still running.
    func quit(timeout: Double) -> Int32? {
        if suspended { signal(SIGCONT) }
        process.closeStdin()
        switch transport {
        case .standardStreams: break
        case .channel, .none:
            // A program whose channel is gone (or that has none) may not end on its own: SIGTERM after a moment.
            if transport == .channel, !record.withLock({ $0.channelClosed }) { send(.exit(status: 0)) }
            if let status = waitForExit(timeout: min(Self.stdinGrace, timeout)) { return status }
            process.signalGroup(SIGTERM)
        }
        return waitForExit(timeout: timeout)
    }

    /// How `quit` asks, for the log.
    var quitDescription: String {
        switch transport {
        case .standardStreams: "stdin closed"
        case .channel:
            "stdin closed, exit requested on its control channel, SIGTERM to its process group if it runs \(Int(Self.stdinGrace)) s later"
        case .none: "stdin closed, SIGTERM to its process group if it runs \(Int(Self.stdinGrace)) s later"
        }
    }

    /// Ends the process whatever its state: ask it to quit, then kill it (and
    /// its process group, if it has one of its own) if it lingers. One reaped
    /// already has only its output left open, by a process that left its
    /// group (`setsid`): nothing of it is left to kill, nor waited for again.
    func end() {
        if isRunning, quit(timeout: 5) == nil, process.signalGroup(SIGKILL) {
            _ = waitForExit(timeout: 5)
        }
        record.withLock { _ in channel }?.close()
    }
}
