import Foundation
@_exported import ChildProcess
import PropertyList

/// `groupsim defaults watch --json DOMAIN` as a real observer process.
public final class WatchProcess: @unchecked Sendable {
    public let process: RunningProcess

    /// One line of the watch output.
    public struct Event: Sendable, CustomStringConvertible {
        public let kind: String
        public let key: String?
        public let new: PlistValue?
        public let old: PlistValue?
        public let origin: String?
        public let valueDomain: String?
        public let raw: String
        public var description: String { raw }
    }

    /// `groupsim defaults watch --json DOMAIN`; with `heldUntilInput`, the test
    /// tool's variant whose watcher thread waits for a line on stdin once ready.
    public init(root: TemporaryRoot, domain: String, heldUntilInput: Bool = false) throws {
        process = try RunningProcess(
            heldUntilInput ? BuiltExecutable.path("groupsim-stress") : BuiltExecutable.path("groupsim"),
            (heldUntilInput ? ["watch-held", "--json"] : ["defaults", "watch", "--json"]) + [domain],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
        _ = try nextEvent(where: { $0.kind == "ready" })
    }

    public static func parse(_ line: String) throws -> Event {
        let object = try PlistJSON.parseObject(line, maximumFieldDepth: ProtocolLine.maximumFieldDepth)
        func value(_ name: String) throws -> PlistValue? {
            guard let field = object[name], field != .null else { return nil }
            return try PlistJSON.decode(field)
        }
        return Event(
            kind: object["event"]?.stringValue ?? "?", key: object["key"]?.stringValue, new: try value("new"), old: try value("old"),
            origin: object["origin"]?.stringValue, valueDomain: object["valueDomain"]?.stringValue, raw: line)
    }

    /// Waits for (and consumes events up to) the first event satisfying `predicate`.
    @discardableResult
    public func nextEvent(timeout: TimeInterval = 20, where predicate: (Event) -> Bool) throws -> Event {
        var matched: Event? = nil
        try process.waitForLine(timeout: timeout) { line in
            guard let event = try? Self.parse(line), predicate(event) else { return false }
            matched = event
            return true
        }
        return matched!
    }

    /// Waits for the change that sets `key` to `value`; returns every change consumed on the way.
    @discardableResult
    public func waitForChange(_ key: String, to value: PlistValue?, timeout: TimeInterval = 20) throws -> [Event] {
        var seen: [Event] = []
        try process.waitForLine(timeout: timeout) { line in
            guard let event = try? Self.parse(line) else { return false }
            seen.append(event)
            return event.kind == "change" && event.key == key && event.new == value
        }
        return seen
    }

    public func stop() throws {
        process.kill(SIGTERM)
        try process.waitForExit()
    }
}
