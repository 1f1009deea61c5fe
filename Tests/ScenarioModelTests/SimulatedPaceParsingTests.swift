import ScenarioModel
import Testing

/// `simulated-pace: true` on a burst: read, written back, and refused without a pace (what it does: SimulatedPaceTests).
@Suite struct SimulatedPaceParsingTests {
    static let header = "summary: x\ndevices: [iPhone, iPad]\nprocesses:\n  app: { role: main-app, device: iPad }\nsteps:\n"

    func parse(_ steps: String) throws -> Scenario {
        try ScenarioParser.parse(Self.header + steps, file: ScenarioFileSystemTests.file, fileSystem: ScenarioFileSystemTests.files)
    }

    @Test func aSimulatedPaceIsReadWrittenBackAndNeedsAPace() throws {
        let scenario = try parse("  - burst: { in: app, count: 3, key: k, pace-ms: 250, simulated-pace: true }\n")
        guard case .burst(let burst) = scenario.steps[0].action else {
            Issue.record("not a burst: \(scenario.steps[0].action)")
            return
        }
        #expect(burst.simulatedPace && burst.paceMilliseconds == 250)
        let written = StepWriter.lines(scenario.steps[0].action).joined(separator: "\n") + "\n"
        #expect(written.contains("simulated-pace: true"), "\(written)")
        #expect(StepWriter.lines(try parse(written).steps[0].action) == StepWriter.lines(scenario.steps[0].action), "\(written)")
        expectRefusals(
            [
                (
                    "  - burst: { in: app, count: 3, key: k, simulated-pace: true }",
                    "simulated-pace moves the device's clock on by the burst's pace; give pace-ms too"
                ),
                ("  - burst: { in: app, count: 3, key: k, pace-ms: 250, simulated-pace: 7 }", "simulated-pace"),
            ], parse)
    }
}
