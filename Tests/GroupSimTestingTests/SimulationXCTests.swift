import Foundation
import GroupSimTesting
import XCTest

/// GroupSimTesting from XCTest: the same simulations, finished by a
/// teardown block, and failures recorded at the call's (or the scenario
/// step's) file and line.
final class SimulationXCTests: XCTestCase {
    /// Failures recorded by this test case, captured instead of failing the
    /// test when `capturing` is set (to check where they are recorded).
    private var capturing = false
    private var captured: [(description: String, file: String, line: Int)] = []

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        if capturing {
            captured.append((description, filePath, lineNumber))
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    /// The root of a simulation from `makeSimulation()`, checked in `tearDown`,
    /// which XCTest runs after the teardown blocks.
    private var rootRemovedAtTeardown: String?

    override func tearDown() {
        if let root = rootRemovedAtTeardown {
            XCTAssertFalse(FileManager.default.fileExists(atPath: root), "the teardown block finished the passing test's simulation")
        }
        super.tearDown()
    }

    func testTheAppsWriteReachesTheWidgetsObserver() async throws {
        let simulation = try makeSimulation()
        rootRemovedAtTeardown = simulation.root
        try simulation.install(.example)
        let widget = try await simulation.launch("settings-examples", as: .widget, arguments: ["reading-watch", "1"])
        try await widget.waitForOutput(matching: "^ready=true$")
        let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
        try await app.set("ReadingMode", "paper", suite: "group.com.example.notes")
        let delivery = try await widget.waitForChange(key: "ReadingMode", value: "paper")
        XCTAssertEqual(delivery.mechanism, .keyPathObservation)
        let status = try await widget.waitForExit()
        XCTAssertEqual(status, 0)
    }

    /// A `Failure` thrown inside `withSimulation` is recorded at the line of the call.
    func testAFailureInsideWithSimulationIsRecordedAtTheCallsLine() async throws {
        capturing = true
        var line = 0
        var root = ""
        try await withSimulation { simulation in
            root = simulation.root
            try simulation.install(.example)
            let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            line = #line + 1
            try await app.waitForChange(key: "nobody-observes-this", timeout: .milliseconds(200))
        }
        capturing = false
        XCTAssertEqual(captured.count, 1)
        XCTAssertEqual(captured.first?.file, #filePath)
        XCTAssertEqual(captured.first?.line, line)
        XCTAssertTrue(captured.first?.description.contains("nobody-observes-this") == true, captured.first?.description ?? "")
        // The simulation failed: its root is kept for inspection.
        XCTAssertTrue(FileManager.default.fileExists(atPath: root))
        try FileManager.default.removeItem(atPath: root)
    }

    /// A failing scenario step is recorded at its line in the scenario file.
    func testAFailingScenarioStepIsRecordedAtItsLine() async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scenarios/wrong-expectation.yaml").path
        capturing = true
        await expectScenarioPasses(path)
        capturing = false
        for failure in captured { removeKeptRoot(namedIn: failure.description) }
        XCTAssertEqual(captured.count, 1)
        XCTAssertEqual(captured.first?.file, path)
        XCTAssertEqual(captured.first?.line, 9)
        XCTAssertTrue(captured.first?.description.contains("black") == true, captured.first?.description ?? "")
    }
}
