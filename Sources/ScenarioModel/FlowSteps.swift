import Foundation
import SpecFormat

extension StepGrammar {
    // MARK: Structure

    static let flowSteps: [StepSpec] = [
        StepSpec(
            "parallel", shorthand: "a list of steps", does: "runs them at the same time and waits for all",
            examples: ["[{ set: { in: app, key: a, value: 1 } }, { parallel: [{ set: { in: pad, key: b, value: 2 } }, { quit: widget }] }]"]
        ) { input in
            let steps = try input.body.list().map { try ScenarioParser.parseStep($0, input.context) }
            return (.parallel(steps), "parallel: " + steps.map(\.summary).joined(separator: " | "))
        } write: {
            guard case .parallel(let steps) = $0 else { return nil }
            return .block(steps.flatMap { StepWriter.lines($0, indent: "") })
        },
        StepSpec(
            "repeat", fields: [.required("times", .number(1...ScenarioParser.maximumRepeatedSteps)), .required("steps", .steps)],
            does: "runs the steps in order, that many times over (40 widget reloads in one step); a failure names the round",
            examples: ["{ times: 40, steps: [{ reload: widget }, { repeat: { times: 2, steps: [{ increment: { in: app, key: n } }] } }] }"]
        ) { input in
            let fields = try input.fields()
            let times = try fields.number("times")!
            let steps = try fields.node("steps").list().map { try ScenarioParser.parseStep($0, input.context) }
            guard !steps.isEmpty else { throw fields.node("steps").error("'steps' lists the steps to repeat; found none") }
            let (total, overflow) = times.multipliedReportingOverflow(by: steps.map(\.action.stepsRun).reduce(0, +))
            guard !overflow, total <= ScenarioParser.maximumRepeatedSteps else {
                throw input.body.error(
                    "repeat runs \(total) steps (\(times) times \(steps.count), nested repeats multiplied); at most \(ScenarioParser.maximumRepeatedSteps)"
                )
            }
            return (.repeated(times: times, steps), "repeat \(times) times: " + steps.map(\.summary).joined(separator: "; "))
        } write: {
            guard case .repeated(let times, let steps) = $0 else { return nil }
            return .block(["times: \(times)", "steps:"] + steps.flatMap { StepWriter.lines($0, indent: "  ") })
        },
        StepSpec(
            "expect", shorthand: "a check or a list of them (see below)", does: "checks state; a failed check fails the scenario",
            examples: ["{ in: app, key: theme, value: dark }", "[{ acknowledged: app }, { file: group.com.example.notes, count: 2 }]"]
        ) { input in
            let checks = try input.body.listOrSingle().map { LocatedCheck(check: try CheckGrammar.parse($0, input.context), line: $0.line) }
            return (.expect(checks), "expect")
        } write: {
            guard case .expect(let checks) = $0 else { return nil }
            return .block(checks.map { "- " + StepWriter.check($0.check) })
        },
    ]
}
