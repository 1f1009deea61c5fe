import AppProtocol
import Foundation
import SpecFormat

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

    /// `exits:` as written, added to a step's flow mapping.
    static func writing(_ exits: ExpectedExit, into body: String) -> String {
        let field = "exits: " + YAMLText.mapping([("status", "\(exits.status)"), exits.error.map { ("error", YAMLText.scalar($0)) }])
        guard body.hasPrefix("{ "), body.hasSuffix(" }") else { return body }
        return String(body.dropLast(2)) + ", " + field + " }"
    }
}
