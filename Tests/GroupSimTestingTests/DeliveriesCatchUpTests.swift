import Foundation
import GroupSimTesting
import Testing

/// A look at a program's deliveries after a wait on a line its observer printed sees that observer's delivery: the
/// line comes on the program's output at once, the delivery on its control channel once the observer returns, so the
/// look first asks the program for every event it began. The program's observer (`settings-examples slow-observer`)
/// prints, then takes seconds before it returns: without that, the delivery would be missing every time.
@Suite struct DeliveriesCatchUpTests {
    static let group = "group.com.example.notes"

    /// The watcher's observer has printed `theme=dark` and is still running.
    private func observerStillRunning(_ simulation: Simulation) async throws -> LaunchedExecutable {
        try simulation.install(.example)
        let watcher = try await simulation.launch("settings-examples", as: .widget, arguments: ["slow-observer", "3"])
        let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
        try await app.set("theme", "dark", suite: Self.group)
        try await watcher.waitForOutput(matching: "^theme=dark$")
        return watcher
    }

    @Test func deliveriesWaitForAnObserverThatPrintedAndHasNotReturned() async throws {
        try await withSimulation { simulation in
            let watcher = try await observerStillRunning(simulation)
            let deliveries = try await watcher.deliveries()
            #expect(deliveries.filter { $0.key == "theme" && $0.new == "dark" }.map(\.mechanism) == [.observe], "\(deliveries)")
        }
    }

    /// A delivery no wait took counts against `expectNoChange`, one whose observer is still running too.
    @Test func expectNoChangeCountsAnObserverThatHasNotReturned() async throws {
        let simulation = try Simulation()
        defer {
            simulation.finish()
            try? FileManager.default.removeItem(atPath: simulation.root)
        }
        let watcher = try await observerStillRunning(simulation)
        let failure = await #expect(throws: Failure.self) { try await watcher.expectNoChange(key: "theme", within: .milliseconds(100)) }
        #expect(failure?.message.contains("\"dark\"") == true, "\(failure?.message ?? "")")
    }

    /// A suspended program cannot answer: what it sent is all there is, and the look does not wait for it.
    @Test func aSuspendedProgramIsNotAsked() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let watcher = try await simulation.launch("settings-examples", as: .widget, arguments: ["slow-observer", "0"])
            try watcher.suspend()
            #expect(try await watcher.deliveries(timeout: .seconds(1)).isEmpty)
            try watcher.resume()
            #expect(try await watcher.warnings().isEmpty)
        }
    }
}
