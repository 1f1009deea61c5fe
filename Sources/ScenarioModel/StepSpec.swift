import Foundation
import PropertyList
import SpecFormat

/// One step of the scenario grammar: its keyword, the forms it is written
/// in, what it does, how it is read and how it is written back. The parser,
/// the writer (`StepWriter`), the docs' step table (`docs/scenarios.md`,
/// checked by a test) and the error messages all come from these
/// declarations; the round-trip test reads, writes and reads again each
/// of its `examples`.
package struct StepSpec: Sendable {
    /// A step's body as its writer writes it back.
    package enum Written: Sendable {
        /// After the keyword's colon, on its line ("" for nothing).
        case inline(String)
        /// Lines under the keyword (its fields, its steps, its checks), indented as the step's body.
        case block([String])

        static func scalar(_ text: String) -> Written { .inline(YAMLText.scalar(text)) }
        static func mapping(_ fields: [(String, String)?]) -> Written { .inline(YAMLText.mapping(fields)) }
    }

    package let keyword: String
    /// What the step takes when it is not a mapping (a process name, a list, a device), for the docs; nil: a mapping only.
    package let shorthand: String?
    /// The fields of its mapping form, in the order errors list them.
    package let fields: [StepField]
    /// Whether the mapping also takes an event's filters (`wait`, `quiet`).
    package let takesFilters: Bool
    /// What it does, for the docs.
    package let does: String
    /// Bodies of the step as a file writes them (what follows `keyword:`), in
    /// `GrammarExamples`' scenario: between them, every form and every field.
    package let examples: [String]
    let read: @Sendable (StepInput) throws -> (Step.Action, String)
    /// The step's body, for an action of this step; nil for any other.
    let write: @Sendable (Step.Action) -> Written?

    init(
        _ keyword: String, shorthand: String? = nil, fields: [StepField] = [], takesFilters: Bool = false, does: String, examples: [String],
        read: @escaping @Sendable (StepInput) throws -> (Step.Action, String), write: @escaping @Sendable (Step.Action) -> Written?
    ) {
        self.keyword = keyword
        self.shorthand = shorthand
        self.fields = fields
        self.takesFilters = takesFilters
        self.does = does
        self.examples = examples
        self.read = read
        self.write = write
    }

    var allowedKeys: [String] { fields.map(\.name) + (takesFilters ? ScenarioParser.matcherKeys : []) }

    /// The row of the docs' step table.
    var tableRow: String {
        var forms: [String] = []
        if let shorthand { forms.append(shorthand) }
        if !fields.isEmpty { forms.append(fields.map(\.documented).joined(separator: ", ") + (takesFilters ? ", and filters" : "")) }
        return "| `\(keyword)` | \(forms.joined(separator: ", or ")) | \(does) |"
    }
}
