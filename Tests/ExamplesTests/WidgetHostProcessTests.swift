import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// The Notes widget's provider (Examples/SettingsExamples/NotesWidgetProvider.swift,
/// Apple's template shape) run as the example app's widget target through
/// `groupsim exec`, its `GroupSim.runWidget` host driven over its control
/// channel; the app's `WidgetCenter` calls run as the app's own processes,
/// and the device's clock is moved by `groupsim device clock`. Waits are
/// bounded only to catch a hang.
@Suite(.timeLimit(.minutes(5))) struct WidgetHostProcessTests {
    static let wait = widgetWait

    private func advanceClock(_ root: TemporaryRoot, _ duration: String) throws -> String {
        let advanced = try groupsim(["device", "clock", "iPhone", "--advance", duration], root: root)
        guard advanced.status == 0 else { throw TestFailure("clock --advance \(duration): \(advanced.stderr)") }
        return advanced.stdout
    }

    private func writeLastNote(_ note: String, _ root: TemporaryRoot) throws {
        let written = try groupsim(["defaults", "write", "group.com.example.notes", "lastNote", note], root: root)
        #expect(written.status == 0, "\(written.stderr)")
    }

    /// The app's own process: `WidgetCenter.shared.reloadTimelines(ofKind:)`.
    private func appReloads(_ kind: String, background: Bool = false, target: String = "app", _ root: TemporaryRoot) throws -> ProcessResult {
        try groupsim(
            ["exec", "--app", "com.example.notes", "--target", target] + (background ? ["--background"] : []) + [
                "--", BuiltExecutable.path("settings-examples"), "widget-reload", kind,
            ],
            root: root)
    }

    private func isNear(_ date: Date?, _ expected: Date) -> Bool { date.map { abs($0.timeIntervalSince(expected)) < 120 } ?? false }

    @Test func eachEntryShowsAtItsDateOnTheDevicesClockAndAtEndAsksAgain() throws {
        let root = try rootWithExampleApp()
        try writeLastNote("Buy milk", root)
        let widget = try startWidget(root, ["widget", "at-end"])
        let initial = try render(widget, "initial")
        #expect(initial.card["lastNote"] == .string("Buy milk") && initial.card["hour"] == .integer(0), "\(initial.card)")
        #expect(initial.entry?.kind == "Notes" && isNear(initial.entry?.date, Date()), "\(String(describing: initial.entry))")
        try widget.process.waitForLine(timeout: Self.wait) {
            $0.hasPrefix("widget Notes (initial): entry of ") && $0.contains(#"lastNote="Buy milk""#)
        }

        // An hour on the device's clock: the template's second entry, with the date the provider gave it plus the hour.
        _ = try advanceClock(root, "1h")
        let second = try render(widget, "entry")
        #expect(second.card["hour"] == .integer(1))
        #expect(isNear(second.entry?.date, (initial.entry?.date ?? Date()).addingTimeInterval(3_600)), "\(String(describing: second.entry))")

        // Past the last entry's date: the last entry, then `.atEnd` asks for a new timeline, dated on the device's clock.
        _ = try advanceClock(root, "3h")
        #expect(try render(widget, "entry").card["hour"] == .integer(4))
        let next = try render(widget, "policy")
        #expect(
            next.card["hour"] == .integer(0) && isNear(next.entry?.date, Date().addingTimeInterval(4 * 3_600)), "\(String(describing: next.entry))")
    }

    @Test func afterAsksAgainAtItsDateAndNotBefore() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget", "after"])
        #expect(try render(widget, "initial").card["lastNote"] == .string("No notes yet"))
        try writeLastNote("Call Anna", root)

        _ = try advanceClock(root, "1h")
        #expect(try render(widget, "entry").card["lastNote"] == .string("No notes yet"), "the same timeline's second entry")
        try widget.process.waitForLine(timeout: Self.wait) { $0.contains("the device's clock is at") && $0.contains("next at") }
        #expect(!widget.unconsumed.contains { if case .event(.render(_, "policy", _), _) = $0 { true } else { false } })

        // At 90 minutes, the policy's date: a new timeline, which reads the note.
        _ = try advanceClock(root, "30m")
        #expect(try render(widget, "policy").card["lastNote"] == .string("Call Anna"))
    }

    @Test func neverStaysStaleUntilTheAppReloadsItsKind() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget", "never"])
        #expect(try render(widget, "initial").card["lastNote"] == .string("No notes yet"))
        // Another kind's reload is not this widget's.
        #expect(try appReloads("Weather", root).stdout.contains("reloaded=Weather"))
        try writeLastNote("Buy milk", root)

        // A day later it still shows its last entry from before the write: `.never` never asks again.
        _ = try advanceClock(root, "1d")
        let stale = try render(widget, "entry")
        #expect(stale.card["lastNote"] == .string("No notes yet") && stale.card["hour"] == .integer(4), "\(stale.card)")
        try widget.process.waitForLine(timeout: Self.wait) { $0.contains("the device's clock is at") && $0.hasSuffix("nothing more until a reload") }

        // The app, in the foreground, reloads the Notes kind: the widget asks its provider and shows the note.
        let reload = try appReloads("Notes", root)
        #expect(reload.status == 0, "\(reload.stderr)")
        let fresh = try render(widget, "reload-request")
        #expect(fresh.card["lastNote"] == .string("Buy milk") && fresh.card["hour"] == .integer(0), "\(fresh.card)")
    }

    /// The Notes app with a widget whose budget is one reload a day (and, with `intents`, an intent extension).
    private func installNotesWithABudgetOfOne(_ root: TemporaryRoot, intents: Bool = false) throws {
        let manifest = root.path + "/notes.yaml"
        try
            ("""
        name: Notes
        targets:
          main-app: { bundle-id: com.example.notes, app-groups: [group.com.example.notes] }
          widget: { bundle-id: com.example.notes.widget, app-groups: [group.com.example.notes], reload-budget: 1 }

        """ + (intents ? "  intent-extension: { bundle-id: com.example.notes.intents, app-groups: [group.com.example.notes] }\n" : ""))
        .write(toFile: manifest, atomically: true, encoding: .utf8)
        let installed = try groupsim(["app", "install", "--manifest", manifest], root: root)
        #expect(installed.status == 0, "\(installed.stderr)")
    }

    @Test func backgroundReloadsPastTheBudgetWaitForTheNextDay() throws {
        let root = TemporaryRoot()
        try installNotesWithABudgetOfOne(root)
        let widget = try startWidget(root, ["widget", "never"])
        _ = try render(widget, "initial")

        try writeLastNote("one", root)
        #expect(try appReloads("Notes", background: true, root).status == 0)
        #expect(try render(widget, "reload-request").card["lastNote"] == .string("one"))
        try writeLastNote("two", root)
        let spent = try appReloads("Notes", background: true, root)
        #expect(
            spent.stderr.contains("reloadTimelines(ofKind: \"Notes\") of com.example.notes.widget was deferred: its budget of 1 reloads"),
            "\(spent.stderr)")
        #expect(try groupsim(["device", "clock", "iPhone"], root: root).stdout.contains("used 1, deferred 1"))

        // The next day delivers it, the first of the new day's budget.
        #expect(try advanceClock(root, "1d").contains("delivered the deferred reload of com.example.notes.widget"))
        #expect(try render(widget, "deferred-reload").card["lastNote"] == .string("two"))
        // From the foreground, reloads are free whatever is left.
        try writeLastNote("three", root)
        #expect(try appReloads("Notes", root).status == 0)
        #expect(try render(widget, "reload-request").card["lastNote"] == .string("three"))
    }

    /// Siri and Shortcuts run an intent extension while its app is not in the
    /// foreground, the one state in which WidgetKit counts no reload: the
    /// extension's reloads count (before, every one was free).
    @Test func anIntentExtensionsReloadsCountAgainstTheBudget() throws {
        let root = TemporaryRoot()
        try installNotesWithABudgetOfOne(root, intents: true)
        let widget = try startWidget(root, ["widget", "never"])
        _ = try render(widget, "initial")
        try writeLastNote("one", root)
        #expect(try appReloads("Notes", target: "intent", root).status == 0)
        #expect(try render(widget, "reload-request").card["lastNote"] == .string("one"))
        let spent = try appReloads("Notes", target: "intent", root)
        #expect(spent.stderr.contains("was deferred: its budget of 1 reloads"), "\(spent.stderr)")
    }

    @Test func reloadOnTheChannelIsAnsweredOnceTheNewEntryIsShown() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget", "never"])
        _ = try render(widget, "initial")
        try writeLastNote("Buy milk", root)
        #expect(try widget.request(.reloadTimeline, timeout: Self.wait).ok)
        // Already sent before the answer: the first render among what was read.
        #expect(try render(widget, "request").card["lastNote"] == .string("Buy milk"))
        // An app that links SimulatedWidgetKit answers `reload-widgets` as its WidgetCenter's reloadAllTimelines().
        let app = try AppProcess(
            controlling: [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--", BuiltExecutable.path("settings-examples"), "wait-input",
            ], root: root)
        try writeLastNote("Call Anna", root)
        #expect(try app.request(.reloadWidgets, timeout: Self.wait).ok)
        #expect(try render(widget, "reload-request").card["lastNote"] == .string("Call Anna"))
        app.closeInput()
        // The app's WidgetCenter lists it while it runs, and not once it has ended.
        let listed = try groupsim(
            ["exec", "--app", "com.example.notes", "--", BuiltExecutable.path("settings-examples"), "widget-configurations"], root: root)
        #expect(listed.stdout.contains("widgets=Notes:systemSmall"), "\(listed.stdout)\(listed.stderr)")
        #expect(try widget.request(.exit(status: 0)).ok)
        #expect(try widget.process.waitForExit(timeout: Self.wait) == 0)
        let after = try groupsim(
            ["exec", "--app", "com.example.notes", "--", BuiltExecutable.path("settings-examples"), "widget-configurations"], root: root)
        #expect(after.stdout.contains("widgets=\n"), "\(after.stdout)\(after.stderr)")
    }

    @Test func aProviderThatNeverCallsItsCompletionIsReportedByName() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget-forgetful"], environment: ["GROUPSIM_WIDGET_PROVIDER_TIMEOUT": "1"])
        let warning = try widget.warning(kind: "widget-provider", timeout: Self.wait)
        #expect(
            warning.message.contains("ForgetfulProvider did not call getTimeline(in:completion:)'s completion within 1 s")
                && warning.message.contains("Notes widget's timeline: initial") && warning.message.contains("nothing shown"), "\(warning.message)")
        let refused = try widget.request(.reloadTimeline, timeout: Self.wait)
        #expect(
            !refused.ok && (refused.error ?? "").contains("ForgetfulProvider gave the Notes widget no timeline within 1 s"),
            "\(String(describing: refused.error))")
        // It goes on: once there is a note, its provider answers.
        try writeLastNote("Buy milk", root)
        #expect(try widget.request(.reloadTimeline, timeout: Self.wait).ok)
        #expect(try render(widget, "request").card["lastNote"] == .string("Buy milk"))
    }

    @Test func aProviderThatCallsItsCompletionTwiceIsReportedByName() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget-twice"])
        #expect(try render(widget, "initial").card["lastNote"] == .string("cached"))
        let warning = try widget.warning(kind: "widget-provider", timeout: Self.wait)
        #expect(warning.message.contains("TwiceProvider called getTimeline(in:completion:)'s completion more than once"), "\(warning.message)")
        #expect(!widget.unconsumed.contains { if case .event(.render, _) = $0 { true } else { false } }, "the second timeline is not shown")
    }
}
