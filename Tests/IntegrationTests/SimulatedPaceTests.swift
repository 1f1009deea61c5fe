import DeviceState
import Foundation
import GroupDefaults
import ScenarioModel
import Scenarios
import TestSupport
import Testing

/// `simulated-pace: true`: a paced burst moves its device's clock on by its
/// pace between writes instead of sleeping, so what counts time on that clock
/// (the iCloud upload interval) sees the writes spread while nothing waits.
/// (How the step is read and written back: SimulatedPaceParsingTests.)
@Suite struct SimulatedPaceTests {
    static let header = "summary: x\ndevices: [iPhone, iPad]\nprocesses:\n  app: { role: main-app, device: iPad }\nsteps:\n"

    func parse(_ steps: String) throws -> Scenario {
        try ScenarioParser.parse(Self.header + steps, file: "/nonexistent/scenario.yaml", fileSystem: FixedScenarioFiles())
    }

    @Test func aSimulatedPaceMovesTheBurstsDeviceClockOnInsteadOfSleeping() throws {
        let scenario = try parse("  - launch: app\n  - burst: { in: app, count: 5, key: k, value: \"{i}\", pace-ms: 250, simulated-pace: true }\n")
        let result = ScenarioRunner(binaries: BuiltExecutable.directory, keepRoots: true).run(scenario)
        defer { try? FileManager.default.removeItem(atPath: result.root) }
        #expect(result.passed, "\(String(describing: result.failure))")
        let root = SimulationRoot(path: result.root)
        // Four pauses of 250 ms between five writes, on the app's device only.
        #expect(try DeviceClock(root: root, device: "iPad").offset() == 1.0)
        #expect(try DeviceClock(root: root, device: "iPhone").offset() == 0)
    }
}
