import Foundation
import SpecFormat

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
        return StepFields(
            nodes: try body.fields(allowed: spec.allowedKeys, required: required), declared: spec.fields, owner: "step '\(spec.keyword)'",
            context: context)
    }
}
