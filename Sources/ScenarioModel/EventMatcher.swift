import AppProtocol
import Foundation
import PropertyList
import SpecFormat

/// Which events a `wait` or an `expect saw/not-saw` is about.
package struct EventMatcher: Sendable, Equatable, CustomStringConvertible {
    package let event: String
    package var key: String?
    /// Some(nil): the key must have become absent.
    package var value: PlistValue??
    package var origin: String?
    package var reason: String?
    package var card: [String: PlistValue?]?
    package var kind: String?
    package var status: Int?
    /// cloud-change: a notification naming at least these keys.
    package var keys: [String]?
    /// warning, error: the message contains this text.
    package var message: String?
    /// change: the domain the new effective value comes from.
    package var valueDomain: String?
    /// change, delivery: the observer mechanism of a user's executable that was delivered.
    package var mechanism: String?
    /// output: a regular expression a line must match (checked when the file is read).
    package var pattern: String?
    /// output: "stdout" or "stderr" (nil: either).
    package var stream: String?

    package init(event: String) { self.event = event }

    package static let events = [
        "change", "render", "notification", "cloud-change", "warning", "exit", "ready", "intent-result", "error", "delivery", "output",
    ]

    /// Whether the event comes over the control protocol (output and exit are seen without it).
    package var needsControl: Bool { event != "output" && event != "exit" }

    package var description: String {
        var parts = [event]
        if let key { parts.append("key \(key)") }
        if let value { parts.append("value \(value.map { PlistJSON.encode($0) } ?? "absent")") }
        if let origin { parts.append("origin \(origin)") }
        if let reason { parts.append("reason \(reason)") }
        if let card {
            parts.append("card \(card.keys.sorted().map { "\($0)=\(card[$0]!.map { PlistJSON.encode($0) } ?? "absent")" }.joined(separator: ","))")
        }
        if let kind { parts.append("kind \(kind)") }
        if let status { parts.append("status \(status)") }
        if let keys { parts.append("keys [\(keys.joined(separator: ", "))]") }
        if let message { parts.append("message containing \(PlistJSON.quote(message))") }
        if let valueDomain { parts.append("value from \(valueDomain)") }
        if let mechanism { parts.append("mechanism \(mechanism)") }
        if let stream { parts.append("on \(stream)") }
        if let pattern { parts.append("matching /\(pattern)/") }
        return parts.joined(separator: ", ")
    }
}

extension ScenarioParser {
    static let matcherKeys = [
        "key", "value", "absent", "origin", "reason", "card", "kind", "status", "keys", "message", "value-domain", "mechanism", "matches", "stream",
    ]

    static func parseMatcher(_ fields: [String: SpecNode], eventNode: SpecNode) throws -> EventMatcher {
        let event = try eventNode.string()
        guard EventMatcher.events.contains(event) else {
            throw eventNode.error("unknown event '\(event)'; events are: \(EventMatcher.events.joined(separator: ", "))")
        }
        var matcher = EventMatcher(event: event)
        matcher.key = try fields["key"]?.string()
        if let node = fields["value"] { matcher.value = .some(try node.plistValue()) }
        if try fields["absent"]?.bool() == true { matcher.value = .some(nil) }
        matcher.origin = try fields["origin"]?.string()
        // other-device: an iCloud notification delivered to a user's executable (`did-change-externally`).
        if let origin = matcher.origin, !["this-process", "other-process", "other-device"].contains(origin) {
            throw fields["origin"]!.error("origin is this-process, other-process or other-device, found '\(origin)'")
        }
        matcher.reason = try fields["reason"]?.string()
        matcher.card = try fields["card"].map(parseCard)
        matcher.kind = try fields["kind"]?.string()
        matcher.status = try fields["status"]?.int(in: ControlProtocol.exitStatusRange)
        matcher.keys = try fields["keys"].map { node in
            if case .sequence = node.node { return try node.list().map { try $0.string() } }
            return try node.strings()
        }
        if matcher.keys != nil && event != "cloud-change" { throw fields["keys"]!.error("'keys' goes with the cloud-change event") }
        matcher.message = try fields["message"]?.string()
        if matcher.message != nil && !["warning", "error"].contains(event) {
            throw fields["message"]!.error("'message' goes with warning and error events")
        }
        matcher.valueDomain = try fields["value-domain"]?.string()
        if matcher.valueDomain != nil && event != "change" { throw fields["value-domain"]!.error("'value-domain' goes with the change event") }
        matcher.mechanism = try fields["mechanism"]?.string()
        if let mechanism = matcher.mechanism {
            guard ["change", "delivery"].contains(event) else {
                throw fields["mechanism"]!.error("'mechanism' goes with the change and delivery events")
            }
            guard DeliveryMechanism(rawValue: mechanism) != nil else {
                throw fields["mechanism"]!.error(
                    "a delivery mechanism is one of \(DeliveryMechanism.allCases.map(\.rawValue).joined(separator: ", ")), found '\(mechanism)'")
            }
        }
        matcher.pattern = try fields["matches"].map(parsePattern)
        matcher.stream = try fields["stream"].map(parseStream)
        if event == "output" {
            guard matcher.pattern != nil else { throw eventNode.error("an output event needs 'matches' (a regular expression a line must match)") }
        } else if let node = fields["matches"] ?? fields["stream"] {
            throw node.error("'matches' and 'stream' go with the output event")
        }
        if let reason = matcher.reason, event == "cloud-change", !CloudReasons.all.contains(reason) {
            throw fields["reason"]!.error("a cloud-change reason is one of \(CloudReasons.all.joined(separator: ", ")), found '\(reason)'")
        }
        return matcher
    }

    /// A regular expression, checked now so a bad one is an error at its line and column.
    static func parsePattern(_ node: SpecNode) throws -> String {
        let pattern = try node.string()
        do { _ = try NSRegularExpression(pattern: pattern) } catch {
            throw node.error("'\(pattern)' is not a valid regular expression (ICU syntax, as NSRegularExpression reads it)")
        }
        return pattern
    }

    static func parseStream(_ node: SpecNode) throws -> String {
        let stream = try node.string()
        guard ["stdout", "stderr"].contains(stream) else { throw node.error("stream is stdout or stderr, found '\(stream)'") }
        return stream
    }

    static func parseCard(_ node: SpecNode) throws -> [String: PlistValue?] {
        var card: [String: PlistValue?] = [:]
        for (key, value) in try node.entries() {
            card[key] = value.node.null != nil && value.node.scalar?.style == .plain ? PlistValue?.none : .some(try value.plistValue())
        }
        return card
    }
}

extension EventMatcher {
    /// The filters as `ScenarioParser.parseMatcher` reads them back.
    var writtenFilters: [(String, String)?] {
        [
            key.map { ("key", YAMLText.scalar($0)) }, value.map(YAMLText.valueOrAbsent), origin.map { ("origin", YAMLText.scalar($0)) },
            reason.map { ("reason", YAMLText.scalar($0)) }, card.map { ("card", YAMLText.card($0)) }, kind.map { ("kind", YAMLText.scalar($0)) },
            status.map { ("status", "\($0)") }, keys.map { ("keys", YAMLText.words($0)) }, message.map { ("message", YAMLText.quoted($0)) },
            valueDomain.map { ("value-domain", YAMLText.scalar($0)) }, mechanism.map { ("mechanism", YAMLText.scalar($0)) },
            pattern.map { ("matches", YAMLText.quoted($0)) }, stream.map { ("stream", YAMLText.scalar($0)) },
        ]
    }
}
