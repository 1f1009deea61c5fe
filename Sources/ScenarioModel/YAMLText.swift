import Foundation
import PropertyList

/// Scalars, lists and mappings written as YAML that the scenario parser
/// reads back exactly: the pieces step and check writers put together.
package enum YAMLText {
    /// `{ a: 1, b: x }`; a nil entry is left out (an optional field not given).
    package static func mapping(_ fields: [(String, String)?]) -> String {
        "{ " + fields.compactMap { $0 }.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + " }"
    }

    package static func list(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }

    /// A list of strings, each as `scalar` writes it.
    package static func words(_ words: [String]) -> String { list(words.map(scalar)) }

    /// A string as YAML reads it back as that string: plain when it is a
    /// word YAML takes as text, else double-quoted (JSON's quoting is YAML's).
    package static func scalar(_ text: String) -> String {
        // A leading "-" is plain when a letter follows (launch arguments: -theme).
        let word = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let plain =
            word.first.map { $0.isLetter } == true
            && text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
            && !["true", "false", "yes", "no", "on", "off", "y", "n", "null"].contains(text.lowercased())
        return plain ? text : quoted(text)
    }

    package static func quoted(_ text: String) -> String { PlistJSON.quote(text) }

    /// A value as the parser reads it back exactly.
    package static func value(_ value: PlistValue) -> String {
        switch value {
        case .string(let text): return scalar(text)
        case .integer(let number): return "\(number)"
        case .bool(let flag): return flag ? "true" : "false"
        case .array(let items): return list(items.map(Self.value))
        case .dictionary(let entries): return entries.isEmpty ? "{}" : mapping(entries.keys.sorted().map { (scalar($0), Self.value(entries[$0]!)) })
        case .real: return PlistJSON.encode(value)
        case .date(let date): return "!date " + PlistJSON.timestamp(date)
        case .data(let bytes): return "!data " + bytes.map { String(format: "%02x", $0) }.joined()
        }
    }

    /// A value that may be absent, as a card or `result` writes it: `~` for absent.
    package static func optionalValue(_ value: PlistValue?) -> String { value.map(Self.value) ?? "~" }

    /// `value: V`, or `absent: true` for a value that must be absent.
    package static func valueOrAbsent(_ value: PlistValue?) -> (String, String) {
        value.map { ("value", Self.value($0)) } ?? ("absent", "true")
    }

    /// A mapping of keys to values that may be absent (`~`), keys sorted: a card, a ready info.
    package static func card(_ card: [String: PlistValue?]) -> String {
        card.isEmpty ? "{}" : mapping(card.keys.sorted().map { (scalar($0), optionalValue(card[$0]!)) })
    }

    /// A duration as advance-clock reads it, in its largest whole unit.
    package static func duration(_ seconds: Double) -> String {
        for (unit, size) in [("d", 86_400.0), ("h", 3_600.0), ("m", 60.0)] where seconds >= size && seconds.truncatingRemainder(dividingBy: size) == 0
        {
            return "\(Int(seconds / size))\(unit)"
        }
        return "\(seconds)s"
    }
}
