import Foundation

/// One field of a step or a check written as a mapping: its name, what it
/// holds, whether it is needed, and a few words for the docs.
package struct StepField: Sendable {
    package enum Kind: Sendable {
        /// A declared process, a declared device.
        case process, device
        case text, words, flag
        /// A property-list value, a mapping of them.
        case value, mapping
        /// A whole number within a range.
        case number(ClosedRange<Int>)
        /// Any 64-bit integer.
        case integer
        /// Milliseconds within a range (the cloud's bounds).
        case milliseconds(ClosedRange<Int64>)
        /// Seconds, more than 0 and at most `ScenarioParser.maximumWait`.
        case seconds
        /// A list of steps (`repeat`).
        case steps
    }

    package let name: String
    package let kind: Kind
    package let required: Bool
    package let note: String?

    static func required(_ name: String, _ kind: Kind = .text, _ note: String? = nil) -> StepField {
        StepField(name: name, kind: kind, required: true, note: note)
    }

    static func optional(_ name: String, _ kind: Kind = .text, _ note: String? = nil) -> StepField {
        StepField(name: name, kind: kind, required: false, note: note)
    }

    /// The field as the docs' step table shows it: "`count` (1 to 100000)", "optional `by` (1)".
    var documented: String {
        var details: [String] = []
        if let note { details.append(note) }
        switch kind {
        case .number(let range): details.append("\(range.lowerBound) to \(range.upperBound)")
        case .milliseconds(let range): details.append("ms, \(range.lowerBound) to \(range.upperBound)")
        case .seconds: details.append("seconds, more than 0 and at most \(Int(ScenarioParser.maximumWait))")
        case .mapping: details.append("a mapping")
        case .steps: details.append("a list of steps")
        default: break
        }
        return (required ? "" : "optional ") + "`\(name)`" + (details.isEmpty ? "" : " (\(details.joined(separator: "; ")))")
    }
}
