import ScenarioModel
import Testing

/// `exits:` on a value step: the step is expected to end its process (a key the iCloud store refuses ends the app),
/// read strictly; what it does is shown by scenario `cloud/exec-step-ends-the-app`.
@Suite struct ExitsFieldTests {
    func parse(_ steps: String) throws -> Scenario {
        try ScenarioParser.parse(SuiteFieldTests.header + steps, file: ScenarioFileSystemTests.file, fileSystem: ScenarioFileSystemTests.files)
    }

    @Test func aValueStepMaySayItEndsItsProcess() throws {
        let scenario = try parse(
            """
              - set: { in: program, key: k, value: 1, exits: { status: 134, error: too long } }
              - increment: { in: app, key: n, exits: { status: 0 } }
              - set: { in: program, key: k, value: 1 }
              - kvs-set: { in: program, key: k, value: 1, exits: { status: 134 } }
              - kvs-remove: { in: app, key: k, exits: { status: 134, error: too long } }
            """)
        #expect(
            scenario.steps.map(\.exits) == [
                ExpectedExit(status: 134, error: "too long"), ExpectedExit(status: 0, error: nil), nil, ExpectedExit(status: 134, error: nil),
                ExpectedExit(status: 134, error: "too long"),
            ])
    }

    @Test func aBadExitsIsRefusedAtItsPlace() {
        expectRefusals(
            [
                ("  - set: { in: program, key: k, value: 1, exits: 134 }", "mapping"),
                ("  - set: { in: program, key: k, value: 1, exits: { error: x } }", "status"),
                ("  - set: { in: program, key: k, value: 1, exits: { status: 256 } }", "255"),
                ("  - set: { in: program, key: k, value: 1, exits: { status: -1 } }", "255"),
                ("  - set: { in: program, key: k, value: 1, exits: { status: 9223372036854775807 } }", "255"),
                ("  - set: { in: program, key: k, value: 1, exits: { status: -9223372036854775808 } }", "255"),
                ("  - set: { in: program, key: k, value: 1, exits: { status: 1, signal: ABRT } }", "signal"),
                ("  - set: { in: program, key: k, value: 1, exits: { status: 1, error: [a] } }", "error"),
                ("  - quit: { in: program, exits: { status: 0 } }", "quit"),
                ("  - kvs-set: { in: program, key: k, value: 1, exits: { status: 256 } }", "255"),
            ], parse)
    }
}
