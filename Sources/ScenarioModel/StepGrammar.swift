import AppProtocol
import Foundation

/// Every step a scenario may take, one declaration each (`StepSpec`), in
/// the order of the docs' table: the one place a step's name, forms,
/// fields, ranges, description, reader and writer are written. The
/// declarations live by family: `ProcessSteps`, `DefaultsSteps`,
/// `ToolSteps`, `WaitSteps`, `FaultSteps`, `DeviceSteps`, `CloudSteps`,
/// `FlowSteps`.
package enum StepGrammar {
    package static let all: [StepSpec] =
        processSteps + defaultsSteps + toolSteps + waitSteps + faultSteps + deviceSteps + cloudSteps + flowSteps

    static let byKeyword = Dictionary(uniqueKeysWithValues: all.map { ($0.keyword, $0) })

    package static var keywords: [String] { all.map(\.keyword) }

    static func spec(_ keyword: String) -> StepSpec? { byKeyword[keyword] }

    /// How long a `send` waits for the process to take its line, once its stdin pipe is full.
    package static let sendTimeout: Double = 10

    static let status = StepField.Kind.number(ControlProtocol.exitStatusRange)
    /// A failed launch's status: any but 0.
    static let failureStatus = StepField.Kind.number(1...ControlProtocol.exitStatusRange.upperBound)
    static let count = StepField.Kind.number(1...ScenarioParser.maximumCount)

    /// The docs' step table, in the order of `all`.
    package static var table: String {
        (["| step | fields | what it does |", "|---|---|---|"] + all.map(\.tableRow)).joined(separator: "\n")
    }
}
