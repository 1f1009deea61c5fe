import AppProtocol
import Foundation
import PropertyList

/// A simulated app process (main-app, widget, intent-extension) driven
/// through its JSON control protocol, as the scenario runner drives it:
/// requests are written and lines read by `ControlProtocol`, the protocol's
/// one encoder and decoder, so the tests know no field names of their own.
/// Or any executable that links SimulatedFoundation, driven the same way
/// over its control channel (`init(controlling:root:)`).
/// Unchecked Sendable: the backlog and request counter belong to the test's thread, which alone sends and waits; `RunningProcess` and `LineConnection` guard their own state.
package final class AppProcess: @unchecked Sendable {
    package let process: RunningProcess
    /// Where protocol lines travel: the process's stdin and stdout, or its control channel.
    private let lines: LineStream
    /// The control channel, for an executable driven through one.
    package let channel: LineConnection?
    /// Keeps the channel's socket path until the program has gone.
    private let listener: LineSocketListener?
    /// The process's ready line, decoded (nil for the intent extension, which is not waited for).
    package private(set) var readyLine: DecodedLine?
    /// The `info` of the ready event.
    package var ready: [String: PlistValue] {
        if case .event(.ready(let info), _)? = readyLine?.message { info } else { [:] }
    }
    /// Lines read while waiting for something else, for later waits.
    private var backlog: [DecodedLine] = []
    private var nextID = 0

    package init(
        _ role: String, root: TemporaryRoot, manifest: String? = nil, device: String = "iPhone", arguments: [String] = [],
        launchArguments: [String] = [], environment: [String: String] = [:]
    ) throws {
        var all = ["--json"] + (manifest.map { ["--manifest", $0] } ?? []) + arguments
        if !launchArguments.isEmpty { all += ["--"] + launchArguments }
        process = try RunningProcess(
            BuiltExecutable.path(role), all,
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": device].merging(environment) { _, new in new })
        lines = process
        channel = nil
        listener = nil
        if role != "intent-extension" {
            readyLine = try line(timeout: 20) { if case .event(.ready, _) = $0 { true } else { false } }
        }
    }

    /// In `command`, this word stands for the control socket's path (then the
    /// variable is not set: `groupsim exec --control-socket` is what passes it).
    package static let controlSocketPlaceholder = "{control-socket}"

    /// A program that links SimulatedFoundation, started with a control
    /// channel (docs/protocol.md): it connects to a socket listening in the
    /// root, named by GROUPSIM_CONTROL_SOCKET, or by the argument that is
    /// `controlSocketPlaceholder`. Waits for its `ready` event.
    package init(controlling command: [String], root: TemporaryRoot, device: String = "iPhone", environment: [String: String] = [:]) throws {
        let path = root.path + "/control-\(UUID().uuidString.prefix(8)).sock"
        let listener = try LineSocketListener(path: path)
        var variables = ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": device]
        if !command.contains(Self.controlSocketPlaceholder) { variables[ControlProtocol.channelSocketVariable] = path }
        process = try RunningProcess(
            command[0], command.dropFirst().map { $0 == Self.controlSocketPlaceholder ? path : $0 },
            environment: variables.merging(environment) { _, new in new })
        let channel = try listener.accept(timeout: 20)
        lines = channel
        self.channel = channel
        self.listener = listener
        readyLine = try line(timeout: 20) { if case .event(.ready, _) = $0 { true } else { false } }
    }

    /// The next message satisfying `predicate` (earlier non-matching ones are
    /// kept for later waits; lines that are not protocol lines are skipped).
    private func line(timeout: TimeInterval, _ predicate: (ProtocolMessage) -> Bool) throws -> DecodedLine {
        if let index = backlog.firstIndex(where: { predicate($0.message) }) { return backlog.remove(at: index) }
        var found: DecodedLine? = nil
        try lines.waitForLine(timeout: timeout) { text in
            guard let line = try? ControlProtocol.decode(text) else { return false }
            if predicate(line.message) {
                found = line
                return true
            }
            backlog.append(line)
            return false
        }
        guard let found else { throw TestFailure("no matching line") }
        return found
    }

    private func message(timeout: TimeInterval, _ predicate: (ProtocolMessage) -> Bool) throws -> ProtocolMessage {
        try line(timeout: timeout, predicate).message
    }

    /// The next event satisfying `predicate`.
    @discardableResult
    package func event(timeout: TimeInterval = 20, _ predicate: (AppEvent) -> Bool) throws -> AppEvent {
        let found = try message(timeout: timeout) { message in
            if case .event(let event, _) = message { predicate(event) } else { false }
        }
        guard case .event(let event, _) = found else { throw TestFailure("not an event: \(found)") }
        return event
    }

    /// The response whose id is `id` (as the request sent it: a number or a string).
    @discardableResult
    package func response(id: PlistValue, timeout: TimeInterval = 20) throws -> ProtocolResponse {
        try nextResponse(timeout: timeout) { $0.fields["id"] == id }
    }

    private func nextResponse(timeout: TimeInterval = 20, _ predicate: (ProtocolResponse) -> Bool = { _ in true }) throws -> ProtocolResponse {
        let found = try message(timeout: timeout) { message in
            if case .response(let response) = message { predicate(response) } else { false }
        }
        guard case .response(let response) = found else { throw TestFailure("not a response: \(found)") }
        return response
    }

    /// Sends a request without waiting; returns the id its response will carry.
    package func send(_ request: AppRequest, suite: String? = nil) -> PlistValue {
        nextID += 1
        lines.write(ControlProtocol.requestLine(id: nextID, request, suite: suite))
        return .integer(Int64(nextID))
    }

    /// Sends a request and returns its response (`suite`: answered by that
    /// suite's `UserDefaults`, over an executable's control channel).
    @discardableResult
    package func request(_ request: AppRequest, suite: String? = nil, timeout: TimeInterval = 20) throws -> ProtocolResponse {
        try response(id: send(request, suite: suite), timeout: timeout)
    }

    /// Sends a raw line (for malformed-input tests) and returns the next response.
    package func send(raw line: String) throws -> ProtocolResponse {
        lines.write(line)
        return try nextResponse()
    }

    /// Sends bytes as they are (a line that is not UTF-8, say) on the control
    /// channel, and returns the next response.
    package func send(rawBytes: [UInt8]) throws -> ProtocolResponse {
        guard let channel else { throw TestFailure("send(rawBytes:) needs a control channel") }
        channel.writeRaw(rawBytes)
        return try nextResponse()
    }

    /// Sends a raw line and returns the raw text of the response to it (the
    /// next response line), for checks on exactly what crossed the protocol.
    package func rawResponse(to line: String, timeout: TimeInterval = 20) throws -> String {
        lines.write(line)
        var found: String? = nil
        try lines.waitForLine(timeout: timeout) { text in
            guard let line = try? ControlProtocol.decode(text) else { return false }
            if case .response = line.message {
                found = text
                return true
            }
            backlog.append(line)
            return false
        }
        guard let found else { throw TestFailure("no response to \(line)") }
        return found
    }

    /// The value a `get` returns, and the domain it comes from.
    package func get(_ key: String) throws -> (value: PlistValue?, domain: String?) {
        let response = try request(.get(key: key))
        return (response.value, response.domain)
    }

    package func set(_ key: String, _ value: PlistValue) throws {
        let response = try request(.set(key: key, value: value))
        guard response.ok else { throw TestFailure("set failed: \(response.fields)") }
    }

    /// Waits for a change event of `key` whose new value satisfies `matches`.
    @discardableResult
    package func change(_ key: String, timeout: TimeInterval = 20, where matches: (PlistValue?) -> Bool) throws -> ValueChange {
        let event = try event(timeout: timeout) { event in
            guard case .change(let change) = event, change.key == key else { return false }
            return matches(change.new)
        }
        guard case .change(let change) = event else { throw TestFailure("not a change: \(event)") }
        return change
    }

    /// Waits for a delivery to an executable's own observers (of `mechanism`
    /// and `key`, if given, and satisfying `matches`).
    @discardableResult
    package func delivery(
        _ mechanism: DeliveryMechanism? = nil, key: String? = nil, timeout: TimeInterval = 20,
        where matches: (Delivery) -> Bool = { _ in true }
    ) throws -> Delivery {
        let event = try event(timeout: timeout) { event in
            guard case .delivery(let delivery) = event else { return false }
            return (mechanism == nil || delivery.mechanism == mechanism) && (key == nil || delivery.key == key) && matches(delivery)
        }
        guard case .delivery(let delivery) = event else { throw TestFailure("not a delivery: \(event)") }
        return delivery
    }

    /// Waits for a warning (of `kind`, if given); returns its kind and message.
    @discardableResult
    package func warning(kind wanted: String? = nil, timeout: TimeInterval = 20) throws -> (kind: String, message: String) {
        let event = try event(timeout: timeout) { event in
            guard case .warning(let kind, _) = event else { return false }
            return wanted == nil || kind == wanted
        }
        guard case .warning(let kind, let message) = event else { throw TestFailure("not a warning: \(event)") }
        return (kind, message)
    }

    /// Waits for the exit event; returns the status it announces.
    @discardableResult
    package func exitEvent(timeout: TimeInterval = 20) throws -> Int32 {
        let event = try event(timeout: timeout) { if case .exit = $0 { true } else { false } }
        guard case .exit(let status) = event else { throw TestFailure("not an exit: \(event)") }
        return status
    }

    /// Waits for a widget render (for `reason`, if given); returns its card as key → value.
    package func render(timeout: TimeInterval = 20, reason wanted: String? = nil) throws -> [String: PlistValue?] {
        let event = try event(timeout: timeout) { event in
            guard case .render(_, let reason, _) = event else { return false }
            return wanted == nil || reason == wanted
        }
        guard case .render(let lines, _, _) = event else { throw TestFailure("not a render: \(event)") }
        var card: [String: PlistValue?] = [:]
        for line in lines { card.updateValue(line.value, forKey: line.key) }  // absent stays a nil entry
        return card
    }

    /// Messages seen so far that were not consumed by a wait.
    package var unconsumed: [ProtocolMessage] { backlog.map(\.message) }

    /// Closes stdin, or the control channel of an executable driven through one.
    package func closeInput() {
        if let channel { channel.close() } else { process.closeStdin() }
    }

    package func waitForExit() throws -> Int32 { try process.waitForExit() }
}
