import Foundation
import PropertyList
import SpecFormat

/// A step's or a check's mapping, read field by field as its declaration says.
struct StepFields {
    let nodes: [String: SpecNode]
    /// The fields the step or check declares.
    let declared: [StepField]
    /// Whose fields they are, for the grammar's own mistakes: "step 'set'", "check 'saw'".
    let owner: String
    let context: ScenarioParser.Context

    subscript(name: String) -> SpecNode? { nodes[name] }

    /// The declared kind of a field the reader asks for. A reader asking for
    /// a field its step does not declare, or as another kind, is the grammar's
    /// mistake: the file is refused at that field, naming it, rather than crashing.
    private func kind(of name: String, _ node: SpecNode) throws -> StepField.Kind {
        guard let field = declared.first(where: { $0.name == name }) else {
            throw node.error("\(owner) declares no field '\(name)' (a mistake of the grammar, Sources/ScenarioModel)")
        }
        return field.kind
    }

    private func mismatch(_ name: String, _ node: SpecNode, _ wanted: String) -> SpecError {
        node.error("field '\(name)' of \(owner) is not declared as \(wanted) (a mistake of the grammar, Sources/ScenarioModel)")
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

    /// `value: V` or `absent: true` (Some(nil); it wins over a value); nil when neither is given.
    func valueOrAbsent() throws -> PlistValue?? {
        if try nodes["absent"]?.bool() == true { return .some(nil) }
        return try nodes["value"].map { .some(try $0.plistValue()) }
    }

    /// "key=value …" of every field but `skipping`, for a step's summary.
    func described(skipping: String) -> String { ScenarioParser.describe(nodes, skipping: skipping) }
}
