import AppProtocol
import Foundation
import PropertyList
import SpecFormat

/// One field of a step written as a mapping: its name, what it holds,
/// whether the step needs it, and a few words for the docs.
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

/// One step of the scenario grammar: its keyword, the forms it is written
/// in, what it does, and how it is read. The parser, the docs' step table
/// (`docs/scenarios.md`, checked by a test) and the error messages all come
/// from these declarations.
package struct StepSpec: Sendable {
    package let keyword: String
    /// What the step takes when it is not a mapping (a process name, a list, a device), for the docs; nil: a mapping only.
    package let shorthand: String?
    /// The fields of its mapping form, in the order errors list them.
    package let fields: [StepField]
    /// Whether the mapping also takes an event's filters (`wait`, `quiet`).
    package let takesFilters: Bool
    /// What it does, for the docs.
    package let does: String
    let read: @Sendable (StepInput) throws -> (Step.Action, String)

    init(
        _ keyword: String, shorthand: String? = nil, fields: [StepField] = [], takesFilters: Bool = false, does: String,
        read: @escaping @Sendable (StepInput) throws -> (Step.Action, String)
    ) {
        self.keyword = keyword
        self.shorthand = shorthand
        self.fields = fields
        self.takesFilters = takesFilters
        self.does = does
        self.read = read
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

/// What a step's reader gets: the step's body where it is written, the
/// scenario's processes and devices, and its declaration.
struct StepInput {
    let spec: StepSpec
    let body: SpecNode
    let context: ScenarioParser.Context

    var keyword: String { spec.keyword }
    var isMapping: Bool { if case .mapping = body.node { true } else { false } }
    var isScalar: Bool { if case .scalar = body.node { true } else { false } }
    var isList: Bool { if case .sequence = body.node { true } else { false } }

    /// The body as a process name.
    func process() throws -> String { try context.process(body) }

    /// The body as a device name.
    func device() throws -> String {
        guard let name = try context.device(body) else { throw body.error("name a device") }
        return name
    }

    /// The body's mapping, checked against the declared fields (unknown and missing keys are errors).
    func fields() throws -> StepFields {
        let required = spec.fields.filter(\.required).map(\.name)
        return StepFields(nodes: try body.fields(allowed: spec.allowedKeys, required: required), spec: spec, context: context)
    }
}

/// A step's mapping, read field by field as its declaration says.
struct StepFields {
    let nodes: [String: SpecNode]
    let spec: StepSpec
    let context: ScenarioParser.Context

    subscript(name: String) -> SpecNode? { nodes[name] }

    /// The declared kind of a field the reader asks for. A reader asking for
    /// a field its step does not declare, or as another kind, is the grammar's
    /// mistake: the file is refused at that field, naming it, rather than crashing.
    private func kind(of name: String, _ node: SpecNode) throws -> StepField.Kind {
        guard let field = spec.fields.first(where: { $0.name == name }) else {
            throw node.error("step '\(spec.keyword)' declares no field '\(name)' (a mistake of StepTable.swift)")
        }
        return field.kind
    }

    private func mismatch(_ name: String, _ node: SpecNode, _ wanted: String) -> SpecError {
        node.error("field '\(name)' of step '\(spec.keyword)' is not declared as \(wanted) (a mistake of StepTable.swift)")
    }

    /// A field the declaration requires (the mapping was checked to have it).
    func node(_ name: String) -> SpecNode { nodes[name]! }

    func process(_ name: String) throws -> String { try context.process(node(name)) }
    func device(_ name: String) throws -> String? { try context.device(nodes[name]) }
    func text(_ name: String) throws -> String? { try nodes[name]?.string() }
    func words(_ name: String) throws -> [String]? { try nodes[name]?.strings() }
    func flag(_ name: String) throws -> Bool? { try nodes[name]?.bool() }

    /// A whole number, within the field's declared range.
    func number(_ name: String) throws -> Int? {
        guard let node = nodes[name] else { return nil }
        switch try kind(of: name, node) {
        case .number(let range): return try node.int(in: range)
        case .integer: return try node.int()
        default: throw mismatch(name, node, "a number")
        }
    }

    func milliseconds(_ name: String) throws -> Int64? {
        guard let node = nodes[name] else { return nil }
        guard case .milliseconds(let range) = try kind(of: name, node) else { throw mismatch(name, node, "milliseconds") }
        return try node.int64(in: range)
    }

    func seconds(_ name: String) throws -> Double? {
        guard let node = nodes[name] else { return nil }
        guard case .seconds = try kind(of: name, node) else { throw mismatch(name, node, "seconds") }
        return try node.seconds(atMost: ScenarioParser.maximumWait)
    }

    /// "key=value …" of every field but `skipping`, for a step's summary.
    func described(skipping: String) -> String { ScenarioParser.describe(nodes, skipping: skipping) }
}

extension StepGrammar {
    /// `exits:` on a step that asks something of a process: the step is expected to end it (a key the iCloud store
    /// refuses ends the app, as Apple's store raises), judged by its real exit.
    static let exitsField = StepField.optional(
        "exits", .mapping,
        "`{ status: N, error: TEXT }`: the step ends the process, with status N as a shell shows it (134: SIGABRT), its stderr saying TEXT")

    /// The `exits:` of a step whose declaration takes it, read strictly.
    static func expectedExit(of spec: StepSpec, _ body: SpecNode) throws -> ExpectedExit? {
        guard spec.fields.contains(where: { $0.name == exitsField.name }), case .mapping = body.node,
            let node = try body.fields(allowed: spec.allowedKeys)[exitsField.name]
        else { return nil }
        let fields = try node.fields(allowed: ["status", "error"], required: ["status"])
        return ExpectedExit(
            status: Int32(try fields["status"]!.int(in: ControlProtocol.exitStatusRange)), error: try fields["error"]?.string())
    }
}

extension StepSpec {
    /// The docs' step table, in the order of `StepGrammar.all`.
    package static var table: String {
        (["| step | fields | what it does |", "|---|---|---|"] + StepGrammar.all.map(\.tableRow)).joined(separator: "\n")
    }
}
