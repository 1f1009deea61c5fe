import Foundation
import SpecFormat

/// One form of check an `expect:` takes: the key that names it (`lead`),
/// its fields, what it checks, how it is read and how it is written back.
/// The parser, the writer (`StepWriter.check`), the docs' check table
/// (`docs/scenarios.md`, checked by a test) and the error messages all come
/// from these declarations (`CheckGrammar`); the round-trip test reads,
/// writes and reads again each of its `examples`.
package struct CheckSpec: Sendable {
    /// A few words for messages: "a file check", "an exit check".
    package let name: String
    /// The key that says a check is of this form (`saw`, `file`, `key` …). A
    /// check has one form: of the forms whose lead it has, the one whose
    /// fields take the others' leads (`{ file, key }` is a file check, `key`
    /// being one of its fields).
    package let lead: String
    /// The form as the docs show it: `{ in: P, saw: EVENT, …filters }`.
    package let form: String
    /// Its fields, the lead among them, in the order errors list them.
    package let fields: [StepField]
    /// Whether it also takes an event's filters (`saw`, `not-saw`).
    package let takesFilters: Bool
    /// What it checks, for the docs.
    package let checks: String
    /// Checks of this form as a file writes them, in `GrammarExamples`' scenario: between them, every field.
    package let examples: [String]
    let read: @Sendable (CheckInput) throws -> Check
    /// The check's fields as written, for a check of this form; nil for any other (a form that another writes: nil always).
    let write: @Sendable (Check) -> [(String, String)?]?

    init(
        _ name: String, lead: String, form: String, fields: [StepField], takesFilters: Bool = false, checks: String, examples: [String],
        read: @escaping @Sendable (CheckInput) throws -> Check, write: @escaping @Sendable (Check) -> [(String, String)?]?
    ) {
        self.name = name
        self.lead = lead
        self.form = form
        self.fields = fields
        self.takesFilters = takesFilters
        self.checks = checks
        self.examples = examples
        self.read = read
        self.write = write
    }

    var allowedKeys: [String] { fields.map(\.name) + (takesFilters ? ScenarioParser.matcherKeys : []) }

    /// The row of the docs' check table.
    var tableRow: String {
        let fields = fields.map(\.documented).joined(separator: ", ") + (takesFilters ? ", and filters (as `wait`'s)" : "")
        return "| `\(form)` | \(fields) | \(checks) |"
    }
}
