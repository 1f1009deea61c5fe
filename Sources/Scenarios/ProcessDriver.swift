import ChildProcess
import Foundation
import PropertyList
import AppModel
import AppProtocol
import ScenarioModel

/// Why a scenario stopped: the step, what was expected and what was found.
public struct StepFailure: Error, Sendable, CustomStringConvertible {
    public let line: Int
    public let step: String
    public let message: String
    public var description: String { "line \(line): \(step): \(message)" }
}

/// A failure inside a step, before the step's line is known.
struct CheckFailed: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One running simulated process: it sends requests over the control
/// protocol and records, on a reader thread it owns, every line the process
/// prints, so a wait never misses an event that arrived early.
/// Unchecked Sendable: the recorded events, responses and counters are under `condition`; the rest is set in `init`.
final class ProcessDriver: @unchecked Sendable {
    let name: String
    let process: RunningProcess
    let log: ScenarioLog
    private let condition = NSCondition()
    private var events: [RecordedEvent] = []
    private var responses: [Int: RecordedEvent] = [:]
    private var nextID = 0
    private var finished = false
    private var exitStatusValue: Int32?
    var exitStatus: Int32? { condition.withLock { exitStatusValue } }
    /// Burst bookkeeping: synchronize request id → the burst writes it covers.
    private var pendingSyncs: [Int: [(key: String, value: PlistValue)]] = [:]
    private(set) var acknowledged: [(key: String, value: PlistValue)] = []
    private(set) var acknowledgedSyncs = 0
    private var suspendedValue = false
    var suspended: Bool { condition.withLock { suspendedValue } }

    init(name: String, executable: String, arguments: [String], log: ScenarioLog) throws {
        self.name = name
        self.log = log
        // The run starts and ends its own cloud: an app must not start another.
        process = try RunningProcess(executable, arguments, environment: ["GROUPSIM_CLOUD_AUTOSTART": "0"])
        LiveProcesses.shared.add(process.pid)
        Thread { [self] in readLoop() }.start()
    }

    private func readLoop() {
        while let line = try? process.nextLine(timeout: 365 * 86_400) {
            guard let decoded = try? ControlProtocol.decode(line) else {
                log.record(process: name, kind: .stderr, name: "output", text: line)
                continue
            }
            condition.lock()
            switch decoded.message {
            case .response(let response):
                let event = log.record(process: name, kind: .response, name: "response", fields: decoded.fields,
                                       text: response.ok ? "ok" : "error: \(response.error ?? "?")")
                if let id = response.id.flatMap({ Int(exactly: $0) }) {
                    responses[id] = event
                    if let covered = pendingSyncs.removeValue(forKey: id), response.ok {
                        acknowledged += covered
                        acknowledgedSyncs += 1
                    }
                }
            case .event(let appEvent, _):
                let event = log.record(process: self.name, kind: .event, name: appEvent.name, fields: decoded.fields,
                                       text: Self.describe(appEvent), appEvent: appEvent)
                events.append(event)
            }
            condition.unlock()
            condition.broadcast()
        }
        // A death by signal reads as a shell shows it: 128 + the signal (137 for KILL).
        let status = (try? process.waitForTermination(timeout: 30))?.shellStatus
        LiveProcesses.shared.remove(process.pid)
        condition.lock()
        finished = true
        exitStatusValue = status
        log.record(process: name, kind: .exit, name: "exit", fields: ["status": .integer(Int64(status ?? -1))],
                   text: "exited with status \(status.map(String.init) ?? "?")", appEvent: .exit(status: status ?? -1))
        condition.unlock()
        condition.broadcast()
    }

    /// A short human text for an event, for the log and the failure report.
    static func describe(_ event: AppEvent) -> String {
        func show(_ value: PlistValue?) -> String { value.map { PlistJSON.encode($0) } ?? "absent" }
        switch event {
        case .change(let change): return "change \(change.key): \(show(change.old)) → \(show(change.new)) (\(change.origin))"
        case .render(let card, let reason):
            return "render (\(reason)): " + card.sorted { $0.key < $1.key }.map { "\($0.key)=\(show($0.value))" }.joined(separator: " ")
        case .warning(let kind, let message): return "warning \(kind): \(message)"
        case .error(let message): return "error: \(message)"
        case .intentResult(let intent, let key, let value): return "intent \(intent) → \(key) = \(show(value))"
        case .exit(let status): return "exit \(status)"
        case .cloudChange(let reason, let keys): return "iCloud \(reason): \(keys.isEmpty ? "no keys" : keys.joined(separator: ", "))"
        case .delivery(let delivery): return delivery.description
        case .ready, .notification: return event.name
        }
    }

    /// Sends a command without waiting; returns its request id.
    @discardableResult
    func send(_ command: AppRequest) -> Int {
        let id = condition.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        process.write(ControlProtocol.requestLine(id: id, command))
        return id
    }

    /// Sends a command and waits for its response; an error response fails the step.
    @discardableResult
    func request(_ command: AppRequest, timeout: Double = 10) throws -> RecordedEvent {
        let id = send(command)
        let response = try waitForResponse(id, timeout: timeout)
        guard let answer = response.response, answer.ok else {
            throw CheckFailed("\(name) answered: \(response.response?.error ?? "error")")
        }
        return response
    }

    func waitForResponse(_ id: Int, timeout: Double) throws -> RecordedEvent {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while responses[id] == nil {
            if finished { throw CheckFailed("\(name) exited (status \(exitStatusValue.map(String.init) ?? "?")) before answering") }
            if !condition.wait(until: deadline) { throw CheckFailed("\(name) did not answer within \(timeout) s") }
        }
        return responses[id]!
    }

    /// The first event since launch that matches (waiting up to `timeout`).
    func waitFor(_ matcher: EventMatcher, timeout: Double) throws -> RecordedEvent {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let match = events.first(where: matcher.matches) { return match }
            if finished {
                let status = exitStatusValue ?? -1
                guard matcher.event == "exit" else { throw CheckFailed("\(name) exited (status \(status)) before a \(matcher) event") }
                guard matcher.status == nil || matcher.status == Int(status) else {
                    throw CheckFailed("\(name) exited with status \(status), not \(matcher.status!)")
                }
                return RecordedEvent(time: log.now, process: name, kind: .exit, name: "exit", fields: ["status": .integer(Int64(status))], text: "exit",
                                     appEvent: .exit(status: status))
            }
            if !condition.wait(until: deadline) { throw CheckFailed("no \(matcher) event in \(name) within \(timeout) s") }
        }
    }

    func recordedEvents() -> [RecordedEvent] { condition.withLock { events } }

    /// Watches for `seconds`: the first event matching that arrives after the
    /// call (or the exit, for an exit matcher), or nil if none did.
    func firstNew(_ matcher: EventMatcher, within seconds: Double) -> RecordedEvent? {
        let deadline = Date().addingTimeInterval(seconds)
        condition.lock()
        defer { condition.unlock() }
        let seen = events.count
        while true {
            if let match = events[seen...].first(where: matcher.matches) { return match }
            if finished || !condition.wait(until: deadline) { return events[seen...].first(where: matcher.matches) }
        }
    }

    /// Sends a burst pipelined, with a synchronize every `syncEvery` sets.
    func startBurst(_ burst: Burst) -> Int {
        var covered: [(key: String, value: PlistValue)] = []
        var lastID = 0
        for index in 0..<burst.count {
            let key = burst.key(index), value = burst.value(index)
            lastID = send(burst.cloud ? .cloudSet(key: key, value: value) : .set(key: key, value: value))
            covered.append((key, value))
            if let every = burst.syncEvery, (index + 1) % every == 0 || index == burst.count - 1 {
                let id = condition.withLock { () -> Int in
                    nextID += 1
                    pendingSyncs[nextID] = covered
                    return nextID
                }
                process.write(ControlProtocol.requestLine(id: id, .synchronize))
                covered = []
                lastID = id
            }
        }
        return lastID
    }

    func waitForAcknowledgedSyncs(_ count: Int, timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while acknowledgedSyncs < count {
            if finished { throw CheckFailed("\(name) exited after \(acknowledgedSyncs) acknowledged synchronizes, before \(count)") }
            if !condition.wait(until: deadline) { throw CheckFailed("only \(acknowledgedSyncs) of \(count) synchronizes acknowledged by \(name) within \(timeout) s") }
        }
    }

    func acknowledgedWrites() -> [(key: String, value: PlistValue)] { condition.withLock { acknowledged } }

    func signal(_ signal: Int32) {
        // Through the child's owner: once it is reaped, its pid (perhaps another process's by now) is never signalled.
        process.signal(signal)
        if signal == SIGSTOP { condition.withLock { suspendedValue = true } }
        if signal == SIGCONT { condition.withLock { suspendedValue = false } }
    }

    /// Waits for the process to exit; nil on timeout.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            if !condition.wait(until: deadline) { return nil }
        }
        return exitStatusValue
    }

    var isRunning: Bool { condition.withLock { !finished } }

    /// Ends the process whatever its state: resume it, close stdin, then kill if it lingers.
    func end() {
        guard isRunning else { return }
        if suspended { signal(SIGCONT) }
        process.closeStdin()
        if waitForExit(timeout: 5) == nil {
            signal(SIGKILL)
            _ = waitForExit(timeout: 5)
        }
    }
}

/// Every child process the runner started, so an interrupted run ends them all.
/// Unchecked Sendable: the pids and the interrupting signal are under `lock`; the signal sources are made once, under it too.
public final class LiveProcesses: @unchecked Sendable {
    public static let shared = LiveProcesses()
    private let lock = NSLock()
    private var pids = Set<Int32>()
    private var interruptedBy: Int32?
    nonisolated(unsafe) private var sources: [DispatchSourceSignal] = []

    /// A process started while the run is being interrupted is killed at once.
    func add(_ pid: Int32) {
        let late = lock.withLock { () -> Bool in
            pids.insert(pid)
            return interruptedBy != nil
        }
        if late { kill(pid, SIGKILL) }
    }

    func remove(_ pid: Int32) { _ = lock.withLock { pids.remove(pid) } }

    /// Kills (and resumes) every child; returns their pids.
    @discardableResult
    public func endAll() -> Set<Int32> {
        let all = lock.withLock { pids }
        for pid in all { kill(pid, SIGCONT); kill(pid, SIGKILL) }
        return all
    }

    /// The signal (SIGINT, SIGTERM) that interrupted the run, if one did.
    public var interruption: Int32? { lock.withLock { interruptedBy } }

    /// Throws if the run was interrupted: nothing new starts after a stop request.
    func checkNotInterrupted() throws {
        if let signal = interruption { throw CheckFailed("\(Self.interruptedPrefix) by \(Self.describe(signal)) before this step") }
    }

    /// How the report's failure of an interrupted scenario begins.
    public static let interruptedPrefix = "interrupted"

    /// The signal's name, for reports.
    public static func describe(_ signal: Int32) -> String {
        signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
    }

    /// On SIGINT/SIGTERM: resume and kill every child, then call `finish`
    /// with the signal (by default: exit with 128 + the signal, 130 or 143).
    /// A second signal exits at once.
    public func endAllOnInterrupt(then finish: @escaping @Sendable (Int32) -> Void = { exit(128 + $0) }) {
        lock.withLock {
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [self] in
                    let again = lock.withLock { () -> Bool in
                        defer { if interruptedBy == nil { interruptedBy = number } }
                        return interruptedBy != nil
                    }
                    let all = endAll()
                    if again { exit(128 + number) }
                    FileHandle.standardError.write(Data("\ninterrupted (\(Self.describe(number))): ended \(all.count) simulated process(es)\n".utf8))
                    finish(number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
