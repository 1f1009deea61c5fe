import AppModel
import AppProtocol
import ChildProcess
import Foundation
import PropertyList

/// A property-list value as the simulation stores it: `"dark"`, `14`,
/// `1.5`, `true`, `.date(…)`, `.data(…)`, `["a", "b"]`, `["size": 1.5]`.
public typealias Value = PlistValue
/// One call of one of the program's own observers (`waitForChange` returns it).
public typealias Delivery = AppProtocol.Delivery
/// Which kind of observer a `Delivery` went to (`.observe`, `.keyValueObserver`, …).
public typealias DeliveryMechanism = AppProtocol.DeliveryMechanism

/// Which of an app's targets a launched executable is (`.app`, `.widget`, `.intent`).
public typealias AppTarget = AppModel.AppTarget

/// The effective value of a key in a program, and the domain it comes from
/// (`NSArgumentDomain`, the suite, `NSRegistrationDomain` …; nil when absent).
public struct EffectiveValue: Sendable, Equatable {
    public let value: Value?
    public let domain: String?

    public init(value: Value?, domain: String?) {
        self.value = value
        self.domain = domain
    }
}

/// One of your executables running as a target (app, widget, intent
/// extension) of an installed app on a simulated device, driven through the
/// control channel SimulatedFoundation serves in it (docs/protocol.md). Reads
/// and writes go through the program's own `UserDefaults`, so its observers
/// are called as for its own calls; every call of an observer of the program
/// is recorded as a `Delivery`, which `waitForChange` waits for.
///
/// Every method waits at most its `timeout` and throws `Failure`, naming the
/// caller's line, when what it waits for does not happen.
public final class LaunchedExecutable: Sendable {
    /// "NAME as TARGET of BUNDLE on DEVICE", as failures name it.
    public let name: String
    public let pid: Int32
    /// The `info` of the program's `ready` event: bundleId, appGroups, suite, searchList, device, root …
    public let info: [String: Value]

    let process: RunningProcess
    private let connection: LineConnection
    /// Keeps the socket's path until the program has gone.
    private let listener: LineSocketListener
    private let outcome: SimulationOutcome

    private let record: ChannelRecord

    /// How long a program may take to connect and say `ready`.
    static let startUpSeconds = 20.0

    /// Starts `executable` with `environment` added and waits, at most
    /// `startUpSeconds`, until it has connected to `socketPath` and said `ready`.
    init(
        name: String, executable: String, arguments: [String], environment: [String: String], socketPath: String,
        outcome: SimulationOutcome, place: SourcePlace
    ) throws {
        self.name = name
        self.outcome = outcome
        do {
            listener = try LineSocketListener(path: socketPath)
            process = try RunningProcess(executable, arguments, environment: environment)
        } catch {
            throw outcome.failure("cannot start \(name): \(error)", at: place)
        }
        pid = process.pid
        connection = try Self.accept(listener, from: process, name: name, outcome: outcome, place: place)
        record = ChannelRecord(reading: connection, pid: process.pid)
        guard let ready = record.waitForReady(timeout: Self.startUpSeconds) else {
            throw outcome.failure("\(name) connected but did not say ready within \(Self.startUpSeconds) s; stderr: \(process.stderr)", at: place)
        }
        info = ready
    }

    /// The program's connection, waiting in short slices so that a program
    /// that ended first (or never links SimulatedFoundation) is reported at once.
    private static func accept(
        _ listener: LineSocketListener, from process: RunningProcess, name: String, outcome: SimulationOutcome,
        place: SourcePlace
    ) throws -> LineConnection {
        let deadline = Date().addingTimeInterval(startUpSeconds)
        while true {
            if let connection = try? listener.accept(timeout: 0.1) { return connection }
            if let ended = process.termination {
                throw outcome.failure("\(name) \(ended) before it connected to its control channel; stderr: \(process.stderr)", at: place)
            }
            if Date() >= deadline {
                throw outcome.failure(
                    "\(name) did not connect to its control channel within \(startUpSeconds) s: does it link "
                        + "SimulatedFoundation (import SimulatedFoundation in place of Foundation)? stderr: \(process.stderr)", at: place)
            }
        }
    }

    // MARK: Defaults

    /// Sets `key` through the program's `UserDefaults.standard` (or
    /// `UserDefaults(suiteName: suite)`), as a call of its own: its observers are called.
    public func set(
        _ key: String, _ value: Value, suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .set(key: key, value: value), suite: suite, timeout: timeout,
            at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Removes `key` from the program's domain (a lower domain's value shows again).
    public func remove(
        _ key: String, suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .remove(key: key), suite: suite, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Returns once every change the program made to the domain is on disk
    /// (and its iCloud writes are in the device's copy): `synchronize()`.
    public func synchronize(
        suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .synchronize, suite: suite, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// What `object(forKey:)` returns in the program now (nil: absent).
    public func value(
        forKey key: String, suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> Value? {
        try await effectiveValue(forKey: key, suite: suite, timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column).value
    }

    /// The key's effective value in the program and the domain it comes from.
    public func effectiveValue(
        forKey key: String, suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> EffectiveValue
    {
        let response = try await request(
            .get(key: key), suite: suite, timeout: timeout,
            at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
        return EffectiveValue(value: response.value, domain: response.domain)
    }

    /// The domains a read looks in, in order (`NSArgumentDomain`, the suite, … `NSRegistrationDomain`).
    public func searchList(
        suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> [String] {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let response = try await request(.searchList, suite: suite, timeout: timeout, at: place)
        guard let list = response.fields["searchList"]?.arrayValue?.compactMap(\.stringValue) else {
            throw outcome.failure("\(name) answered search-list without a list: \(response.fields)", at: place)
        }
        return list
    }

    /// Sets `key` in the program's `NSUbiquitousKeyValueStore.default` (its
    /// target's `icloud-kvs` store): the device's sync agent uploads it.
    public func setInCloud(
        _ key: String, _ value: Value, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .cloudSet(key: key, value: value), suite: nil, timeout: timeout,
            at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// What the program's `NSUbiquitousKeyValueStore.default` holds for `key` on its device (nil: absent).
    public func cloudValue(
        forKey key: String, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> Value? {
        try await request(
            .cloudGet(key: key), suite: nil, timeout: timeout,
            at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        ).value
    }

    /// Waits until one of the program's observers is told that `key` now
    /// has `value` (any value, when nil), by `mechanism` (any, when nil), and
    /// returns that delivery: which observer fired, the old and new values,
    /// and whether the change came from this process or another. Deliveries
    /// that came before the call count too (each is returned once), so a
    /// change that arrived early is never missed.
    @discardableResult
    public func waitForChange(
        key: String, value: Value? = nil, mechanism: DeliveryMechanism? = nil, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> Delivery
    {
        let wanted = "\(mechanism.map { "\($0.rawValue) " } ?? "")delivery of \(key)" + (value.map { " = \(PlistJSON.encode($0))" } ?? "")
        return try await waitForDelivery(wanted, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)) {
            delivery in
            delivery.key == key && (value == nil || delivery.new == value) && (mechanism == nil || delivery.mechanism == mechanism)
        }
    }

    /// Waits until the program's `NSUbiquitousKeyValueStore` posts
    /// `didChangeExternallyNotification` for a change that includes `key`
    /// (values from another device, the first download, an account change; with
    /// `reason`, only that one: "server-change", "initial-sync-change" …), and
    /// returns that delivery (`reason`, `keys`). Earlier ones count, each once.
    @discardableResult
    public func waitForCloudChange(
        key: String, reason: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> Delivery
    {
        let wanted = "iCloud change" + (reason.map { " (\($0))" } ?? "") + " of \(key)"
        return try await waitForDelivery(wanted, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)) {
            delivery in
            delivery.mechanism == .didChangeExternally && delivery.keys.contains(key) && (reason == nil || delivery.reason == reason)
        }
    }

    /// The first delivery not taken before that `matches`, waiting up to `timeout`.
    private func waitForDelivery(
        _ wanted: String, timeout: Duration, at place: SourcePlace,
        matching matches: @escaping @Sendable (Delivery) -> Bool
    ) async throws -> Delivery {
        let seconds = timeout.seconds
        return try await Blocking.run { [record, outcome, name] in
            let found = record.takeDelivery(timeout: seconds, matching: matches)
            if let delivery = found.delivery { return delivery }
            let seen = found.seen.suffix(5).map(\.description)
            throw outcome.failure(
                "\(name): no \(wanted) within \(seconds) s"
                    + (found.closed ? " (its control channel closed: the program ended)" : "")
                    + "; its observers were told: " + (seen.isEmpty ? "nothing" : seen.joined(separator: "; "))
                    + " (only what the program observes is delivered)", at: place)
        }
    }

    /// Every delivery to the program's observers so far, in order.
    public var deliveries: [Delivery] {
        record.events.compactMap { if case .delivery(let delivery) = $0 { delivery } else { nil } }
    }

    /// Every warning the program said so far (kind, message): `missing-entitlement`, `launch-argument` …
    public var warnings: [(kind: String, message: String)] {
        record.events.compactMap { if case .warning(let kind, let message) = $0 { (kind, message) } else { nil } }
    }

    // MARK: Standard streams

    /// Waits for the next line of the program's standard output (after those
    /// an earlier wait consumed) that the regular expression `pattern`
    /// matches; returns it.
    @discardableResult
    public func waitForOutput(
        matching pattern: String, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> String
    {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let expression: NSRegularExpression
        do { expression = try NSRegularExpression(pattern: pattern) } catch {
            throw outcome.failure("'\(pattern)' is not a regular expression: \(error)", at: place)
        }
        let seconds = timeout.seconds
        return try await Blocking.run { [process, outcome, name] in
            do {
                // NSRegularExpression is not Sendable: it is used on this thread only.
                return try process.waitForLine(timeout: seconds) { text in
                    expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
                }
            } catch {
                let lines = process.allLines
                throw outcome.failure(
                    "\(name): no output line matching '\(pattern)' within \(seconds) s; last lines: "
                        + (lines.isEmpty
                            ? "none (its standard output is a pipe: a program that does not flush, fflush(nil), "
                                + "keeps its lines in its buffer)" : "\(lines.suffix(5))")
                        + "; stderr: \(process.stderr.suffix(500))", at: place)
            }
        }
    }

    /// Everything the program wrote to standard output so far, line by line.
    public var output: [String] { process.allLines }
    /// Everything the program wrote to standard error so far.
    public var standardError: String { process.stderr }

    /// Writes `line` and a newline to the program's standard input.
    public func sendInput(_ line: String, fileID: String = #fileID, filePath: String = #filePath, line callLine: Int = #line, column: Int = #column)
        throws
    {
        guard process.write(line) else {
            throw outcome.failure(
                "\(name) has closed its standard input (it ended?): cannot send '\(line)'",
                at: SourcePlace(fileID: fileID, filePath: filePath, line: callLine, column: column))
        }
    }

    /// Closes the program's standard input (it reads end of file).
    public func closeInput() { process.closeStdin() }

    /// Waits for the program to end; returns its status as a shell shows it
    /// (128 + the signal for a death by signal: 137 after `kill()`). With
    /// `status`, a different one is a failure.
    @discardableResult
    public func waitForExit(
        status expected: Int32? = nil, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> Int32 {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let seconds = timeout.seconds
        let ended = try await Blocking.run { [process, outcome, name] in
            do { return try process.waitForTermination(timeout: seconds) } catch {
                throw outcome.failure("\(name) was still running after \(seconds) s; last lines: \(process.allLines.suffix(5))", at: place)
            }
        }
        if let expected, ended.shellStatus != expected {
            throw outcome.failure(
                "\(name) \(ended) (status \(ended.shellStatus)), not status \(expected); stderr: \(process.stderr.suffix(500))", at: place)
        }
        return ended.shellStatus
    }

    /// Whether the program is still running (its end not yet seen).
    public var isRunning: Bool { process.isRunning }

    // MARK: Faults

    /// `kill -9`: the program ends at once, saving nothing it had pending.
    /// Returns once its end is seen.
    public func kill(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let ended = await (try? Blocking.run { [process] in process.kill(timeout: 10) }) ?? nil
        guard ended != nil else { throw outcome.failure("\(name) was not seen to end within 10 s of SIGKILL", at: place) }
    }

    /// SIGTERM: the program ends as its own handling of the signal decides
    /// (by default it ends at once, as iOS ends an app). `waitForExit` waits for it.
    public func terminate(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) throws {
        try signal(SIGTERM, "SIGTERM", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// SIGSTOP: the program stops where it is (holding any lock it holds) until `resume()`.
    public func suspend(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) throws {
        try signal(SIGSTOP, "SIGSTOP", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// SIGCONT: a suspended program goes on.
    public func resume(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) throws {
        try signal(SIGCONT, "SIGCONT", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    private func signal(_ number: Int32, _ signalName: String, at place: SourcePlace) throws {
        guard process.signal(number) else {
            throw outcome.failure("cannot send \(signalName) to \(name): it has ended (\(process.termination.map(\.description) ?? "?"))", at: place)
        }
    }

    /// Ends the program whatever its state (at the simulation's end).
    func end() {
        connection.close()
        process.kill(timeout: 10)
    }

    /// Whether the program's iCloud store is in use (its target has the entitlement).
    var hasKeyValueStore: Bool { info["icloudKVS"] != nil }

    // MARK: Requests

    /// Sends a request over the control channel and waits for its answer; an error answer is a failure.
    @discardableResult
    func request(_ request: AppRequest, suite: String?, timeout: Duration, at place: SourcePlace) async throws -> ProtocolResponse {
        let id = record.nextRequestID()
        let line = ControlProtocol.requestLine(id: Int(id), request, suite: suite)
        guard connection.write(line) else {
            throw outcome.failure(
                "\(name) has closed its control channel (\(process.termination.map(\.description) ?? "it is ending")); "
                    + "cannot send \(line); stderr: \(process.stderr.suffix(500))", at: place)
        }
        let seconds = timeout.seconds
        let answer = try await Blocking.run { [record] in record.takeResponse(id, timeout: seconds) }
        switch answer {
        case .answered(let response):
            guard response.ok else { throw outcome.failure("\(name) refused \(line): \(response.error ?? "no reason given")", at: place) }
            return response
        case .closed:
            throw outcome.failure(
                "\(name) ended before it answered \(line) (\(process.termination.map(\.description) ?? "its channel closed")); "
                    + "stderr: \(process.stderr.suffix(500))", at: place)
        case .timedOut:
            throw outcome.failure("\(name) did not answer \(line) within \(seconds) s", at: place)
        }
    }
}

/// What a program said on its control channel, read by one thread that owns
/// the reading (until the channel closes) and waited on by the test's calls.
/// Unchecked Sendable: the events, responses, consumed deliveries and counters are under `condition`.
final class ChannelRecord: @unchecked Sendable {
    private let condition = NSCondition()
    private var recorded: [AppEvent] = []
    private var responses: [Int64: ProtocolResponse] = [:]
    private var consumedDeliveries = Set<Int>()
    private var closed = false
    private var lastID: Int64 = 0

    enum Answer {
        case answered(ProtocolResponse)
        case closed, timedOut
    }

    init(reading connection: LineConnection, pid: Int32) {
        let reader = Thread { [self] in
            while let line = try? connection.nextLine(timeout: 365 * 86_400) {
                guard let decoded = try? ControlProtocol.decode(line) else { continue }
                condition.withLock {
                    switch decoded.message {
                    case .event(let event, _): recorded.append(event)
                    case .response(let response): if let id = response.id { responses[id] = response }
                    }
                }
                condition.broadcast()
            }
            condition.withLock { closed = true }
            condition.broadcast()
        }
        reader.name = "groupsim.testing.channel-\(pid)"
        reader.start()
    }

    var events: [AppEvent] { condition.withLock { recorded } }

    func nextRequestID() -> Int64 {
        condition.withLock {
            lastID += 1
            return lastID
        }
    }

    /// Waits until `condition` holds or the deadline passes; false if it passed.
    private func wait(timeout: Double, until satisfied: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !satisfied() {
            if !condition.wait(until: deadline) { return satisfied() }
        }
        return true
    }

    /// The `ready` event's info; nil if the channel closed or `timeout` passed first.
    func waitForReady(timeout: Double) -> [String: PlistValue]? {
        condition.lock()
        defer { condition.unlock() }
        var info: [String: PlistValue]?
        _ = wait(timeout: timeout) {
            info = recorded.lazy.compactMap { if case .ready(let info) = $0 { info } else { nil } }.first
            return info != nil || closed
        }
        return info
    }

    func takeResponse(_ id: Int64, timeout: Double) -> Answer {
        condition.lock()
        defer { condition.unlock() }
        let arrived = wait(timeout: timeout) { responses[id] != nil || closed }
        if let response = responses.removeValue(forKey: id) { return .answered(response) }
        return arrived ? .closed : .timedOut
    }

    /// The first delivery not taken before that `matches`, waiting up to
    /// `timeout`; else nil, with every delivery seen and whether the channel closed.
    func takeDelivery(timeout: Double, matching matches: (Delivery) -> Bool) -> (delivery: Delivery?, seen: [Delivery], closed: Bool) {
        condition.lock()
        defer { condition.unlock() }
        var found: Delivery?
        _ = wait(timeout: timeout) {
            for (index, event) in recorded.enumerated() where !consumedDeliveries.contains(index) {
                guard case .delivery(let delivery) = event, matches(delivery) else { continue }
                consumedDeliveries.insert(index)
                found = delivery
                return true
            }
            return closed
        }
        let seen = recorded.compactMap { if case .delivery(let delivery) = $0 { delivery } else { nil } }
        return (found, seen, closed)
    }
}
