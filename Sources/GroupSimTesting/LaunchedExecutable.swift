import AppInstall
import AppModel
import AppProtocol
import ChildProcess
import Foundation
import PropertyList
import Scenarios

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

    /// A value and its domain, to compare with what `effectiveValue` returns.
    /// - Parameters:
    ///   - value: The value (nil: absent).
    ///   - domain: The domain it comes from (nil when absent).
    public init(value: Value?, domain: String?) {
        self.value = value
        self.domain = domain
    }
}

/// What a launch was given, kept so that `Simulation.restart` starts the
/// same executable with the same identity again.
struct LaunchSpec: Sendable {
    /// "NAME (TARGET of BUNDLE on DEVICE)", as failures name the program.
    let name: String
    let executable: String
    let arguments: [String]
    /// Who it is: the target's identity, given in its environment.
    let identity: ExecutableIdentity
    /// The variables the caller added (and the simulation's own).
    let environment: [String: String]
    /// Whether it links SimulatedFoundation, which serves the control channel.
    let linksSimulatedFoundation: Bool

    func with(arguments: [String]?) -> LaunchSpec {
        LaunchSpec(
            name: name, executable: executable, arguments: arguments ?? self.arguments, identity: identity, environment: environment,
            linksSimulatedFoundation: linksSimulatedFoundation)
    }
}

/// One of your executables running as a target (app, widget, intent
/// extension) of an installed app on a simulated device. One that links
/// SimulatedFoundation is driven through the control channel it serves
/// (docs/protocol.md): reads and writes go through the program's own
/// `UserDefaults`, so its observers are called as for its own calls; every
/// call of an observer of the program is recorded as a `Delivery`, which
/// `waitForChange` waits for. Any other executable has its output, input,
/// end and signals only.
///
/// Every method waits at most its `timeout` and throws `Failure`, naming the
/// caller's line, when what it waits for does not happen.
public final class LaunchedExecutable: Sendable {
    /// "NAME (TARGET of BUNDLE on DEVICE)", as failures name it.
    public let name: String
    public let pid: Int32
    /// The `info` of the program's `ready` event: bundleId, appGroups, suite, searchList, device, root …
    /// (empty for a program without a control channel).
    public let info: [String: Value]

    let spec: LaunchSpec
    let process: RunningProcess
    /// The control channel; nil for a program that does not link SimulatedFoundation.
    private let channel: Channel?
    let outcome: SimulationOutcome
    let record = ProgramRecord()

    /// A program's connection, and the listener that keeps the socket's path until the program has gone.
    private struct Channel: Sendable {
        let connection: LineConnection
        let listener: LineSocketListener
    }

    /// How long a program may take to connect and say `ready`.
    static let startUpSeconds = 20.0

    /// Starts the program of `spec`. One that links SimulatedFoundation is
    /// given `socketPath` and waited for, at most `startUpSeconds`, until it
    /// has connected and said `ready`; any other starts with no signal blocked
    /// (it has no load hook to unblock them) and is running once started.
    init(_ spec: LaunchSpec, socketPath: String, outcome: SimulationOutcome, place: SourcePlace) throws {
        self.spec = spec
        name = spec.name
        self.outcome = outcome
        let listener: LineSocketListener?
        do {
            listener = spec.linksSimulatedFoundation ? try LineSocketListener(path: socketPath) : nil
            let environment = spec.identity.environment(
                over: spec.environment, control: spec.linksSimulatedFoundation ? .socket(socketPath) : nil)
            // The runner's bound on what is kept of a program's output (a flooding one costs bounded memory).
            process = try RunningProcess(
                spec.executable, spec.arguments, environment: environment, handlers: record.handlers, keepsOutput: false,
                lineLimit: OutputBuffer.maximumLineBytes, unblockedSignals: !spec.linksSimulatedFoundation)
        } catch {
            throw outcome.failure("cannot start \(spec.name): \(error)", at: place)
        }
        pid = process.pid
        guard let listener else {
            channel = nil
            info = [:]
            return
        }
        let connection = try Self.accept(listener, from: process, record: record, name: name, outcome: outcome, place: place)
        channel = Channel(connection: connection, listener: listener)
        record.attach(connection, pid: process.pid)
        guard let ready = record.waitForReady(timeout: Self.startUpSeconds) else {
            throw outcome.failure(
                "\(name) connected but did not say ready within \(Self.startUpSeconds) s; stderr: \(record.standardError)", at: place)
        }
        info = ready
    }

    /// The program's connection, waiting in short slices so that a program
    /// that ended first is reported at once.
    private static func accept(
        _ listener: LineSocketListener, from process: RunningProcess, record: ProgramRecord, name: String, outcome: SimulationOutcome,
        place: SourcePlace
    ) throws -> LineConnection {
        let deadline = Date().addingTimeInterval(startUpSeconds)
        while true {
            if let connection = try? listener.accept(timeout: 0.1) { return connection }
            if let ended = process.termination {
                throw outcome.failure(
                    "\(name) \(ended) before it connected to its control channel; stderr: \(record.standardError)", at: place)
            }
            if Date() >= deadline {
                throw outcome.failure(
                    "\(name) did not connect to its control channel within \(startUpSeconds) s; stderr: \(record.standardError)", at: place)
            }
        }
    }

    /// Whether the program serves the control channel (it links SimulatedFoundation):
    /// without it, only its output, input, end and signals can be used.
    public var hasControlChannel: Bool { channel != nil }

    /// Ends the program whatever its state (at the simulation's end).
    func end() {
        channel?.connection.close()
        process.kill(timeout: 10)
    }

    /// The failure of `what` (a call that needs the control channel) for a program without one.
    func channelMissing(for what: String, at place: SourcePlace) -> Failure {
        outcome.failure(
            "\(name) does not link SimulatedFoundation (\(spec.executable) has no symbol of its control channel), so it has no "
                + "control channel, which \(what) needs. Link it: add .product(name: \"SimulatedFoundation\", package: \"groupsim\") "
                + "to the executable target's dependencies and import SimulatedFoundation in place of Foundation (docs/testing.md)",
            at: place)
    }

    // MARK: Defaults

    /// Sets `key` through the program's `UserDefaults.standard` (or
    /// `UserDefaults(suiteName: suite)`), as a call of its own: its observers are called.
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The value.
    ///   - suite: A suite's name, for the program's `UserDefaults(suiteName:)`; nil for its `UserDefaults.standard`.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program refuses or does not answer within `timeout`, or has no control channel.
    public func set(
        _ key: String, _ value: Value, suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .set(key: key, value: value), suite: suite, timeout: timeout,
            at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Removes `key` from the program's domain (a lower domain's value shows again).
    /// - Parameters:
    ///   - key: The key.
    ///   - suite: A suite's name, for the program's `UserDefaults(suiteName:)`; nil for its `UserDefaults.standard`.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program refuses or does not answer within `timeout`, or has no control channel.
    public func remove(
        _ key: String, suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .remove(key: key), suite: suite, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Returns once every change the program made to the domain is on disk
    /// (and its iCloud writes are in the device's copy): `synchronize()`.
    /// - Parameters:
    ///   - suite: A suite's name, for the program's `UserDefaults(suiteName:)`; nil for its `UserDefaults.standard`.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program refuses or does not answer within `timeout`, or has no control channel.
    public func synchronize(
        suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .synchronize, suite: suite, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// What `object(forKey:)` returns in the program now (nil: absent).
    /// - Parameters:
    ///   - key: The key.
    ///   - suite: A suite's name, for the program's `UserDefaults(suiteName:)`; nil for its `UserDefaults.standard`.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program does not answer within `timeout`, or has no control channel.
    /// - Returns: The key's effective value in the program; nil when no domain has it.
    public func value(
        forKey key: String, suite: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> Value? {
        try await effectiveValue(forKey: key, suite: suite, timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column).value
    }

    /// The key's effective value in the program and the domain it comes from.
    /// - Parameters:
    ///   - key: The key.
    ///   - suite: A suite's name, for the program's `UserDefaults(suiteName:)`; nil for its `UserDefaults.standard`.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program does not answer within `timeout`, or has no control channel.
    /// - Returns: The key's effective value and the domain it comes from.
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
    /// - Parameters:
    ///   - suite: A suite's name, for the program's `UserDefaults(suiteName:)`; nil for its `UserDefaults.standard`.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program does not answer within `timeout`, or has no control channel.
    /// - Returns: The domains a read looks in, in order.
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
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The value.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program refuses, does not answer within `timeout`, ends (a key over 64 bytes ends it), or has no control channel.
    public func setInCloud(
        _ key: String, _ value: Value, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .cloudSet(key: key, value: value), suite: nil, timeout: timeout,
            at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// What the program's `NSUbiquitousKeyValueStore.default` holds for `key` on its device (nil: absent).
    /// - Parameters:
    ///   - key: The key.
    ///   - timeout: How long to wait at most for the program's answer.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program does not answer within `timeout`, or has no control channel.
    /// - Returns: The value in the program's iCloud store; nil when it has none.
    public func cloudValue(
        forKey key: String, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> Value? {
        try await request(
            .cloudGet(key: key), suite: nil, timeout: timeout,
            at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        ).value
    }

    // MARK: Requests

    /// Sends `request` without waiting for its answer (one the program may not give: `exit`); false without a channel.
    @discardableResult
    func send(_ request: AppRequest) -> Bool {
        guard let channel else { return false }
        return channel.connection.write(ControlProtocol.requestLine(id: Int(record.nextRequestID()), request, suite: nil))
    }

    /// Sends a request over the control channel and waits for its answer; an error answer is a failure.
    @discardableResult
    func request(_ request: AppRequest, suite: String?, timeout: Duration, at place: SourcePlace) async throws -> ProtocolResponse {
        let (line, answer) = try await exchange(request, suite: suite, timeout: timeout, at: place)
        let seconds = timeout.seconds
        switch answer {
        case .unsent:
            throw outcome.failure(
                "\(name) has closed its control channel (\(process.termination.map(\.description) ?? "it is ending")); "
                    + "cannot send \(line); stderr: \(record.standardError.suffix(500))", at: place)
        case .answered(let response):
            guard response.ok else { throw outcome.failure("\(name) refused \(line): \(response.error ?? "no reason given")", at: place) }
            return response
        case .closed:
            throw outcome.failure(
                "\(name) ended before it answered \(line) (\(process.termination.map(\.description) ?? "its channel closed")); "
                    + "stderr: \(record.standardError.suffix(500))", at: place)
        case .timedOut:
            throw outcome.failure("\(name) did not answer \(line) within \(seconds) s", at: place)
        }
    }

    /// Sends `request` and waits for its answer, failing nothing but a program without a channel: the request's line,
    /// and its answer (`unsent` when the channel was closed already).
    func exchange(_ request: AppRequest, suite: String?, timeout: Duration, at place: SourcePlace) async throws -> (
        line: String, answer: ProgramRecord.Answer
    ) {
        let id = record.nextRequestID()
        let line = ControlProtocol.requestLine(id: Int(id), request, suite: suite)
        guard let channel else { throw channelMissing(for: "the request \(line)", at: place) }
        guard channel.connection.write(line) else { return (line, .unsent) }
        let seconds = timeout.seconds
        return (line, try await Blocking.run { [record] in record.takeResponse(id, timeout: seconds) })
    }
}
