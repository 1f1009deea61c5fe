import Foundation
import GroupSimTesting
import Testing

/// A user's widget (settings-examples running the Notes provider through
/// SimulatedWidgetKit's `GroupSim.runWidget`) driven from a test: its
/// renders waited for, its clock advanced, its timeline reloaded, its buttons tapped.
@Suite struct WidgetTests {
    @Test func aTestWaitsForTheWidgetsEntriesAndReloadsIt() async throws {
        let simulation = try Simulation()
        defer { simulation.finish() }
        try simulation.install(.example)
        let widget = try await simulation.launch("settings-examples", as: .widget, arguments: ["widget", "never"])
        let initial = try await widget.waitForRender(reason: "initial")
        #expect(initial.kind == "Notes" && initial.card["lastNote"] == .string("No notes yet"), "\(initial)")

        try await simulation.advanceClock(by: .seconds(2 * 3_600))
        let later = try await widget.waitForRender(reason: "entry")
        #expect(later.card["hour"] == .integer(2), "\(later)")
        let apart = (later.entryDate ?? .distantPast).timeIntervalSince(initial.entryDate ?? .distantFuture)
        #expect(abs(apart - 2 * 3_600) < 60, "the third entry is two hours after the first on the device's clock: \(apart) s")

        let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
        try await app.set("lastNote", "Buy milk", suite: "group.com.example.notes")
        try await app.synchronize(suite: "group.com.example.notes")
        try await widget.reloadWidget()
        #expect(try await widget.waitForRender(reason: "request").card["lastNote"] == .string("Buy milk"))
    }

    @Test func aTestTapsAConfigurableWidgetsButton() async throws {
        let simulation = try Simulation()
        defer { simulation.finish() }
        try simulation.install(.example)
        // Its configuration intent's parameters are the NAME=VALUE words of its command line.
        let widget = try await simulation.launch("settings-examples", as: .widget, arguments: ["widget-folder", "folder=Work"])
        let initial = try await widget.waitForRender(reason: "initial")
        #expect(initial.kind == "Folder" && initial.card["folder"] == .string("Work") && initial.card["pinned"] == .bool(false), "\(initial)")
        // The button's intent runs in the widget's process; the widget reloads before the call returns.
        let pinned = try await widget.performIntent("PinFolderIntent", parameters: ["folder": "Work"])
        #expect(pinned.value == .string("Work"))
        #expect(try await widget.waitForRender(reason: "intent").card["pinned"] == .bool(true))
    }
}
