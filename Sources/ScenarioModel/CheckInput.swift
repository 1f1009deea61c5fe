import Foundation
import SpecFormat

/// What a check's reader gets: the check where it is written, its fields
/// (checked against its declaration), the scenario's processes and devices.
struct CheckInput {
    let spec: CheckSpec
    let node: SpecNode
    let fields: StepFields
    let context: ScenarioParser.Context

    /// `in:`, the process a process check is about.
    func process() throws -> String { try fields.process("in") }
}
