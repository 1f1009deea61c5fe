import Foundation
import ScenarioModel
import SpecFormat
import Testing

/// `suite:` on the value steps and checks of an `exec:` process: by default
/// its target's one app group (where users' shared settings live), `standard`
/// for `UserDefaults.standard`, or a suite by name; refused on a built-in
/// role, which has its manifest's suite; written back as read.
@Suite struct SuiteFieldTests {
    static let header = """
        summary: x
        processes:
          program: { exec: [./app, wait-input] }
          app: { role: main-app }
        steps:

        """

    func parse(_ steps: String) throws -> Scenario {
        try ScenarioParser.parse(Self.header + steps, file: ScenarioFileSystemTests.file, fileSystem: ScenarioFileSystemTests.files)
    }

    @Test func aValueStepGoesThroughTheTargetsAppGroupUnlessItSaysOtherwise() throws {
        let scenario = try parse(
            """
              - set: { in: program, key: theme, value: dark }
              - set: { in: program, key: theme, value: dark, suite: standard }
              - remove: { in: program, key: theme, suite: group.other }
              - synchronize: { in: program, suite: standard }
              - synchronize: program
              - expect: { in: program, key: theme, value: dark }
              - expect: { in: program, search-list: [NSArgumentDomain], suite: standard }
            """)
        let suites = scenario.steps.map { step -> SuiteChoice? in
            switch step.action {
            case .command(_, _, let suite): suite
            case .expect(let checks):
                switch checks[0].check {
                case .value(_, _, _, _, let suite), .searchList(_, _, let suite): suite
                default: nil
                }
            default: nil
            }
        }
        #expect(suites == [.processDefault, .standard, .named("group.other"), .standard, .processDefault, .processDefault, .standard])
        // The example app's main-app target has one group: the default is it, `standard` sends none; a built-in role sends none.
        #expect(scenario.suiteName(of: "program", .processDefault) == "group.com.example.notes")
        #expect(scenario.suiteName(of: "program", .standard) == nil)
        #expect(scenario.suiteName(of: "program", .named("group.other")) == "group.other")
        #expect(scenario.suiteName(of: "app", .processDefault) == nil)
        // Written back as read.
        for step in scenario.steps {
            let written = StepWriter.lines(step.action).joined(separator: "\n")
            let again = try parse(written + "\n")
            #expect(StepWriter.lines(again.steps[0].action) == StepWriter.lines(step.action), "\(written)")
        }
    }

    @Test func aSuiteWhereNoneGoesIsRefusedAtItsPlace() {
        expectRefusals(
            [
                (
                    "  - set: { in: app, key: k, value: 1, suite: standard }",
                    "'suite' is for an exec: process; app reads and writes its manifest's suite"
                ),
                ("  - expect: { in: program, key: k, value: 1, suite: '' }", "'suite' names a suite"),
                ("  - expect: { in: program, saw: delivery, suite: standard }", "'suite' does not go with a saw check"),
                ("  - reload-widgets: { in: program, suite: standard }", "unknown key 'in'"),
            ], parse)
    }
}
