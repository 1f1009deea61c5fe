import Foundation
import PropertyList
import SharedFiles

/// Something that happened during a run: an event a process emitted, a
/// response, or an action of the runner itself. Times are nanoseconds since
/// the scenario started, taken when the runner received or did it.
public struct RecordedEvent: Sendable {
    public enum Kind: String, Sendable {
        case event, response, action, exit, stderr
    }
    public let time: UInt64
    public let process: String
    public let kind: Kind
    /// The event's name ("change", "render" …), the action's step keyword, or "response".
    public let name: String
    /// The JSON fields (null fields are left out).
    public let fields: [String: PlistValue]
    /// A short human text.
    public let text: String

    public func string(_ field: String) -> String? { fields[field]?.stringValue }
}

/// Every recorded event of one scenario run, in order.
public final class ScenarioLog: @unchecked Sendable {
    public let start = MonotonicClock.now()
    private let lock = NSLock()
    private var entries: [RecordedEvent] = []

    public var now: UInt64 { MonotonicClock.now() - start }

    @discardableResult
    func record(process: String, kind: RecordedEvent.Kind, name: String, fields: [String: PlistValue] = [:], text: String) -> RecordedEvent {
        let event = RecordedEvent(time: now, process: process, kind: kind, name: name, fields: fields, text: text)
        lock.withLock { entries.append(event) }
        return event
    }

    public var all: [RecordedEvent] { lock.withLock { entries } }

    /// How deep a value sits in a response or event line below its field:
    /// a render's card holds `[{"value": V}]`, two levels above V.
    static let fieldWrapping = 2

    /// Decodes one protocol line into fields (nulls dropped), with the strict
    /// reader the processes use, so values are recorded exactly as sent.
    static func fields(of line: String) -> [String: PlistValue]? {
        guard let object = try? PlistJSON.parseObject(line, maximumFieldDepth: PlistLimits.maximumDepth + fieldWrapping) else { return nil }
        var fields: [String: PlistValue] = [:]
        for (key, value) in object where value != .null {
            fields[key] = try? PlistJSON.decode(value, droppingNulls: true)
        }
        return fields
    }
}

extension EventMatcher {
    /// Whether a recorded event is the one this matcher describes.
    func matches(_ event: RecordedEvent) -> Bool {
        guard event.kind == .event || event.kind == .exit, event.name == self.event else { return false }
        if let key, event.string("key") != key { return false }
        if let value, event.fields["new"] != value { return false }
        if let origin, event.string("origin") != origin { return false }
        if let reason, event.string("reason") != reason { return false }
        if let kind, event.string("kind") != kind { return false }
        if let status, Conversions.integerValue(event.fields["status"]) != Int64(status) { return false }
        if let card {
            let shown = Self.card(of: event)
            for (key, expected) in card where (shown[key] ?? nil) != expected { return false }
        }
        return true
    }

    /// A render event's card as key → value (nil for absent).
    static func card(of event: RecordedEvent) -> [String: PlistValue?] {
        var card: [String: PlistValue?] = [:]
        for line in event.fields["card"]?.arrayValue ?? [] {
            guard let entry = line.dictionaryValue, let key = entry["key"]?.stringValue else { continue }
            card[key] = entry["value"]
        }
        return card
    }
}

enum Conversions {
    static func integerValue(_ value: PlistValue?) -> Int64? {
        if case .integer(let i)? = value { return i }
        return nil
    }
}
