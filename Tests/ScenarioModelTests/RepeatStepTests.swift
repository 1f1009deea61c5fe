import Foundation
import ScenarioModel
import SpecFormat
import Testing

/// `repeat: { times: N, steps: [...] }`: the steps in order, N times over;
/// bounded in all (nested repeats multiply), and written back as read.
@Suite struct RepeatStepTests {
    static let header = "summary: x\nprocesses:\n  app: { role: main-app }\nsteps:\n"

    func parse(_ steps: String) throws -> Scenario {
        try ScenarioParser.parse(Self.header + steps, file: ScenarioFileSystemTests.file, fileSystem: ScenarioFileSystemTests.files)
    }

    @Test func stepsAreRepeatedInOrderAndWrittenBackAsRead() throws {
        let scenario = try parse(
            """
              - repeat:
                  times: 3
                  steps:
                    - increment: { in: app, key: count }
                    - repeat: { times: 2, steps: [ { synchronize: app } ] }
            """ + "\n")
        guard case .repeated(let times, let steps) = scenario.steps[0].action else {
            Issue.record("not a repeat: \(scenario.steps[0].action)")
            return
        }
        #expect(times == 3 && steps.count == 2 && scenario.steps[0].action.stepsRun == 9)
        let written = StepWriter.lines(scenario.steps[0].action).joined(separator: "\n") + "\n"
        #expect(StepWriter.lines(try parse(written).steps[0].action) == StepWriter.lines(scenario.steps[0].action), "\(written)")
    }

    @Test func aRepeatOfTooManyStepsOrOfNoneIsRefusedAtItsPlace() {
        expectRefusals(
            [
                ("  - repeat: { times: 1000, steps: [ { repeat: { times: 1000, steps: [ { synchronize: app } ] } } ] }", "repeat runs 1000000 steps"),
                ("  - repeat: { times: 2, steps: [] }", "'steps' lists the steps to repeat; found none"),
                ("  - repeat: { times: 0, steps: [ { synchronize: app } ] }", "times"),
                ("  - repeat: { steps: [ { synchronize: app } ] }", "times"),
            ], parse)
    }
}
