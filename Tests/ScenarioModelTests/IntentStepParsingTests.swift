import Foundation
import ScenarioModel
import SpecFormat
import Testing

/// The `intent` step's `in:`, `dialog` and `error`: where each form runs the
/// intent, what it is refused for (at its line and column), and what
/// StepWriter writes back.
@Suite struct IntentStepParsingTests {
    static let header = """
        summary: x
        processes:
          once: { exec: ./app, target: intent }
          program: { exec: [./app, intents-offer] }
          copier: { exec: cat }
          app: { role: main-app }
          widget: { role: widget }
        steps:

        """

    func parse(_ steps: String) throws -> Scenario {
        try ScenarioParser.parse(Self.header + steps, file: ScenarioFileSystemTests.file, fileSystem: ScenarioFileSystemTests.files)
    }

    func intent(_ steps: String) throws -> IntentStep {
        guard case .intent(let step) = try parse(steps).steps[0].action else {
            throw SpecError(file: "", line: 0, column: 0, message: "not an intent step")
        }
        return step
    }

    func refusal(_ steps: String) throws -> (String, String) {
        do {
            _ = try parse(steps)
        } catch let error as SpecError {
            return ("\(error.line):\(error.column)", error.message)
        }
        Issue.record("\(steps) was accepted")
        return ("", "")
    }

    @Test func eachFormRunsTheIntentWhereItSays() throws {
        let once = try intent("  - intent: { in: once, name: AddNoteIntent, params: { text: milk }, result: 1, dialog: Added. }")
        #expect(once.place == .executable("once", oneShot: true) && once.parameters == ["text": "milk"] && once.dialog == "Added.")
        #expect(once.accepts(status: 0) && !once.accepts(status: 2))
        let failing = try intent("  - intent: { in: program, name: SyncNotesIntent, error: unreachable }")
        #expect(failing.place == .executable("program", oneShot: false) && failing.error == "unreachable")
        #expect(failing.accepts(status: 1) && !failing.accepts(status: 0), "error without status: any failing status")
        let builtIn = try intent("  - intent: { name: SetTheme, params: { theme: dark } }")
        #expect(builtIn.place == .builtInExtension && builtIn.status == nil)
    }

    @Test func mistakesAreRefusedAtTheirPlace() throws {
        let cases: [(String, String, String)] = [
            ("  - intent: { in: program, name: X, status: 2 }", "9:45", "status belongs to a one-shot"),
            ("  - intent: { in: widget, name: X }", "9:19", "is the built-in widget, which runs no App Intents"),
            ("  - intent: { in: app, name: X }", "9:19", "is the built-in main-app, which runs no App Intents"),
            ("  - intent: { in: copier, name: X }", "9:19", "copier has no control channel"),
            ("  - intent: { in: once, name: X, device: iPhone }", "9:42", "runs on its device (iPhone); leave out device"),
            ("  - intent: { name: SetTheme, params: { theme: dark }, dialog: hi }", "9:64", "the built-in intents return no dialog"),
            ("  - intent: { in: once, name: X, result: 1, error: no }", "9:42", "reports no result or dialog"),
            ("  - intent: { in: nobody, name: X }", "9:19", "nobody"),
        ]
        for (step, place, message) in cases {
            let (at, said) = try refusal(step)
            #expect(at == place, "\(step): \(said)")
            #expect(said.contains(message), "\(step): \(said)")
        }
    }

    @Test func writtenIntentStepsReadBackAsTheSameSteps() throws {
        let steps = [
            "  - intent: { in: once, name: AddNoteIntent, params: { text: milk }, status: 0, args: [-theme, dark], result: 1, dialog: Added milk. }",
            "  - intent: { in: program, name: SyncNotesIntent, error: the server is unreachable }",
        ]
        for text in steps {
            let scenario = try parse(text)
            let written = scenario.steps.flatMap { StepWriter.lines($0.action) }.joined(separator: "\n")
            guard case .intent(let first) = scenario.steps[0].action, case .intent(let again) = try parse(written + "\n").steps[0].action else {
                Issue.record("not an intent: \(written)")
                continue
            }
            #expect(
                first.place == again.place && first.parameters == again.parameters && first.status == again.status
                    && first.arguments == again.arguments
                    && first.result == again.result && first.dialog == again.dialog && first.error == again.error, "\(written)")
        }
    }
}
