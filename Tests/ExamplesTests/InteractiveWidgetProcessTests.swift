import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// A configurable, interactive widget (Examples/SettingsExamples/FolderWidget.swift:
/// an `AppIntentTimelineProvider` given its `WidgetConfigurationIntent`, and a
/// button's `PinFolderIntent`) and the favorite toggle of WidgetTraps.swift,
/// run as the example app's widget target through `groupsim exec`; each tap is
/// a `perform-intent` on the widget's control channel. Waits are bounded only
/// to catch a hang.
@Suite(.timeLimit(.minutes(5))) struct InteractiveWidgetProcessTests {
    static let group = "group.com.example.notes"

    private func isRender(_ message: ProtocolMessage, _ reason: String) -> Bool {
        if case .event(.render(_, reason, _), _) = message { true } else { false }
    }

    @Test func aConfigurableWidgetGetsItsIntentFilledFromItsCommandLine() throws {
        let root = try rootWithExampleApp()
        let written = try groupsim(["defaults", "write", Self.group, "notes", "-array", "milk", "eggs"], root: root)
        #expect(written.status == 0, "\(written.stderr)")

        // Configured as a person editing it would: the NAME=VALUE words; the subcommand and launch arguments are not parameters.
        let work = try startWidget(root, ["widget-folder", "folder=Work", "-theme", "dark", "showCount=false"])
        let shown = try render(work, "initial")
        #expect(shown.card["folder"] == .string("Work") && shown.card["pinned"] == .bool(false), "\(shown.card)")
        #expect(shown.card.keys.contains("noteCount") && shown.card["noteCount"]! == nil, "showCount=false: no count, \(shown.card)")
        #expect(shown.entry?.kind == "Folder")
        try work.process.waitForLine(timeout: widgetWait) {
            $0.contains(#"running FolderProvider configured with SelectFolderIntent(folder="Work", showCount=false)"#)
        }

        // Left out, each parameter takes its default.
        let inbox = try startWidget(root, ["widget-folder"])
        let defaults = try render(inbox, "initial")
        #expect(defaults.card["folder"] == .string("Inbox") && defaults.card["noteCount"] == .integer(2), "\(defaults.card)")

        // The app's WidgetCenter gives each running widget's configuration intent back.
        let listed = try groupsim(
            ["exec", "--app", "com.example.notes", "--", BuiltExecutable.path("settings-examples"), "widget-configurations"], root: root)
        let widgets = listed.stdout.split(separator: "\n").first { $0.hasPrefix("widgets=") }?.dropFirst("widgets=".count).split(separator: ",")
        #expect(widgets?.sorted() == ["Folder:systemSmall:folder=Inbox", "Folder:systemSmall:folder=Work"], "\(listed.stdout)\(listed.stderr)")
    }

    @Test func aConfigurationThatCannotBeMadeEndsTheWidgetNamingEachParameter() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget-folder", "showCount=sometimes", "colour=blue"])
        #expect(try widget.process.waitForExit(timeout: widgetWait) == 2)
        let error = try widget.event(timeout: widgetWait) { if case .error = $0 { true } else { false } }
        guard case .error(let message) = error else { return }
        for said in [
            "the Folder widget's configuration cannot be made", "SelectFolderIntent has no parameter 'colour'",
            "parameter showCount of SelectFolderIntent is Bool: 'sometimes' is not", "as NAME=VALUE words on the widget's command line",
        ] {
            #expect(message.contains(said), "\(message)")
        }
        #expect(widget.process.stderr.contains("groupsim: the Folder widget's configuration cannot be made"), "\(widget.process.stderr)")
    }

    @Test func aButtonsIntentRunsInTheWidgetsProcessThenTheWidgetReloads() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget-folder", "folder=Work"])
        #expect(try render(widget, "initial").card["pinned"] == .bool(false))

        let tapped = try widget.request(.performIntent(name: "PinFolderIntent", parameters: ["folder": "Work"]), timeout: widgetWait)
        #expect(tapped.ok && tapped.value == .string("Work"), "\(tapped.fields)")
        // Both said before the answer: the intent's result, then the entry the reload shows.
        let said = widget.unconsumed
        let result = said.firstIndex { if case .event(.intentResult(intent: "PinFolderIntent", _, _, _, _), _) = $0 { true } else { false } }
        let reloaded = said.firstIndex { isRender($0, "intent") }
        #expect(result != nil && reloaded != nil && result! < reloaded!, "\(said)")
        #expect(try render(widget, "intent").card["pinned"] == .bool(true))
        // The write is in the app group, on disk before the answer.
        #expect(try groupsim(["defaults", "read", Self.group, "pinnedFolder"], root: root).trimmedOutput == "Work")

        // A failed intent reloads nothing; an intent the widget does not offer is refused, listing the ones it does.
        let unknown = try widget.request(.performIntent(name: "AddNoteIntent", parameters: [:]), timeout: widgetWait)
        #expect(!unknown.ok && (unknown.error ?? "").contains("this program offers: PinFolderIntent"), "\(String(describing: unknown.error))")
        let missing = try widget.request(.performIntent(name: "PinFolderIntent", parameters: [:]), timeout: widgetWait)
        #expect(!missing.ok && (missing.error ?? "").contains("PinFolderIntent needs parameter folder"), "\(String(describing: missing.error))")
        #expect(!widget.unconsumed.contains { isRender($0, "intent") })
    }

    @Test func aWidgetWithoutIntentsRefusesATap() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget", "never"])
        _ = try render(widget, "initial")
        let refused = try widget.request(.performIntent(name: "PinFolderIntent", parameters: [:]), timeout: widgetWait)
        #expect(!refused.ok, "\(refused.fields)")
        #expect(!widget.unconsumed.contains { isRender($0, "intent") })
    }

    @Test func aTogglesIntentThatWritesStandardDefaultsWritesTheWidgetsOwnDomain() throws {
        let root = try rootWithExampleApp()
        let widget = try startWidget(root, ["widget-favorite"])
        #expect(try render(widget, "initial").card["isFavorite"] == .bool(false))
        #expect(try widget.request(.performIntent(name: "ToggleFavoriteIntent", parameters: ["value": "true"]), timeout: widgetWait).ok)
        // The widget shows it: its provider reads the same domain.
        #expect(try render(widget, "intent").card["isFavorite"] == .bool(true))
        // The widget extension's own domain has it; the app group, which the app reads, does not.
        #expect(try groupsim(["defaults", "read", "com.example.notes.widget", "favorite"], root: root).trimmedOutput == "1")
        #expect(try groupsim(["defaults", "read", Self.group, "favorite"], root: root).status != 0)

        // The fix, the app group's suite in both: the app's domain for the widget's state.
        let fixed = try startWidget(root, ["widget-favorite", "group"])
        #expect(try render(fixed, "initial").card["isFavorite"] == .bool(false))
        #expect(try fixed.request(.performIntent(name: "ToggleFavoriteIntent", parameters: ["value": "true"]), timeout: widgetWait).ok)
        #expect(try render(fixed, "intent").card["isFavorite"] == .bool(true))
        #expect(try groupsim(["defaults", "read", Self.group, "favorite"], root: root).trimmedOutput == "1")
    }
}
