import Foundation
import GroupSimTesting
import Testing

/// The app group's suite: what the app's targets read and write.
let group = "group.com.example.notesapp"

/// The app's executables as the app, widget and intent extension of NotesApp
/// (`notes-app.yaml`) on a simulated iPhone. `swift test` runs in the
/// package's folder, where the manifest and the scenario files are.
@Suite struct NotesAppTests {
    @Test func theWidgetShowsTheAppsTheme() async throws {
        try await withSimulation { simulation in
            try simulation.install(.file("notes-app.yaml"))
            let widget = try await simulation.launch("notes-widget", as: .widget)
            let app = try await simulation.launch("notes-app")
            let initial = try await widget.waitForRender(reason: "initial")
            #expect(initial.kind == "NotesWidget")
            #expect(initial.card["theme"] == "light")
            #expect(initial.card["noteCount"] == 0)

            // The app's @AppStorage writes the suite, then it reloads the widget's kind.
            try await app.sendLine("theme dark")
            let render = try await widget.waitForRender(reason: "reload-request")
            #expect(render.card["theme"] == "dark")
            #expect(try await app.value(forKey: "theme", suite: group) == "dark")
        }
    }

    /// The policy is .never: a write without a reload leaves the widget as it
    /// was, a day later too; a reload shows it.
    @Test func theWidgetIsStaleUntilReloaded() async throws {
        try await withSimulation { simulation in
            try simulation.install(.file("notes-app.yaml"))
            let widget = try await simulation.launch("notes-widget", as: .widget)
            let app = try await simulation.launch("notes-app")
            #expect(try await widget.waitForRender(reason: "initial").card["theme"] == "light")

            // Written in the app's process, but not by the app's code: nobody asks WidgetCenter.
            try await app.set("theme", "dark", suite: group)
            try await app.synchronize(suite: group)
            try await simulation.advanceClock(by: .seconds(24 * 60 * 60))
            try await widget.waitForOutput(matching: "nothing more until a reload$")
            #expect(!widget.standardOutputLines.contains("(reload-request)"))
            #expect(!widget.standardOutputLines.contains("(policy)"))

            try await app.sendLine("note Call Anna")
            let render = try await widget.waitForRender(reason: "reload-request")
            #expect(render.card["theme"] == "dark")
            #expect(render.card["lastNote"] == "Call Anna")
        }
    }

    @Test func aLaunchArgumentWinsInItsOwnProcessOnly() async throws {
        try await withSimulation { simulation in
            try simulation.install(.file("notes-app.yaml"))
            let app = try await simulation.launch("notes-app", arguments: ["-theme", "dark"])
            let widget = try await simulation.launch("notes-widget", as: .widget)
            try await app.waitForOutput(matching: "^theme=dark accent=blue ")
            #expect(try await widget.waitForRender(reason: "initial").card["theme"] == "light")
            #expect(try await app.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "dark", domain: "NSArgumentDomain"))
            #expect(try await widget.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "light", domain: "NSRegistrationDomain"))

            // The app stores black in the suite: the widget shows it; in the app the argument still wins.
            try await app.sendLine("theme black")
            #expect(try await widget.waitForRender(reason: "reload-request").card["theme"] == "black")
            try await app.waitForOutput(matching: "^theme=dark$")
            #expect(try await app.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "dark", domain: "NSArgumentDomain"))
            #expect(try await widget.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "black", domain: group))
        }
    }

    @Test func theIntentAddsANote() async throws {
        try await withSimulation { simulation in
            try simulation.install(.file("notes-app.yaml"))
            let app = try await simulation.launch("notes-app")
            let widget = try await simulation.launch("notes-widget", as: .widget)
            #expect(try await widget.waitForRender(reason: "initial").card["noteCount"] == 0)

            // The intent extension, once, as Shortcuts runs it.
            let outcome = try await simulation.runIntent("AddNoteIntent", parameters: ["text": "buy milk"], in: "notes-intent")
            #expect(outcome == IntentOutcome(value: 1, dialog: "Added buy milk. You have 1 notes."))
            // Its WidgetCenter reload...
            let render = try await widget.waitForRender(reason: "reload-request")
            #expect(render.card["noteCount"] == 1)
            #expect(render.card["lastNote"] == "buy milk")
            // ...and the app's key-value observer on the suite, told of another process's write.
            let delivery = try await app.waitForChange(key: "notes", value: ["buy milk"], mechanism: .keyValueObserver)
            #expect(delivery.origin == "other-process")
            try await app.waitForOutput(matching: "^changed notes=\\[buy milk\\]$")
        }
    }

    /// The app's own CloudSync on two devices signed in to one account: an
    /// accent chosen on the iPhone comes down into the iPad's suite, and the
    /// iPad's app reloads its widget.
    @Test func aSyncedSettingReachesTheOtherDevice() async throws {
        try await withSimulation { simulation in
            try await simulation.addDevice("iPhone", iCloudAccount: "alice")
            try await simulation.addDevice("iPad", iCloudAccount: "alice")
            try simulation.install(.file("notes-app.yaml"), on: "iPhone")
            try simulation.install(.file("notes-app.yaml"), on: "iPad")
            let phone = try await simulation.launch("notes-app", on: "iPhone")
            let pad = try await simulation.launch("notes-app", on: "iPad")
            let padWidget = try await simulation.launch("notes-widget", as: .widget, on: "iPad")
            #expect(try await padWidget.waitForRender(reason: "initial").card["accent"] == "blue")

            try await phone.sendLine("accent green")
            try await phone.waitForOutput(matching: "icloud\\] up sync-accent=green$", stream: .standardError)
            try await pad.waitForOutput(matching: "icloud\\] down sync-accent=green$", stream: .standardError, timeout: .seconds(20))
            #expect(try await padWidget.waitForRender(reason: "reload-request").card["accent"] == "green")
            #expect(try await pad.value(forKey: "sync-accent", suite: group) == "green")
            #expect(try await pad.cloudValue(forKey: "sync-accent") == "green")
            // Not prefixed: it stays on the iPhone.
            try await phone.sendLine("theme dark")
            try await phone.waitForOutput(matching: "^theme=dark$")
            try await simulation.waitForCloud()
            #expect(try await pad.cloudValue(forKey: "theme") == nil)
            #expect(try await pad.value(forKey: "theme", suite: group) == "light")
        }
    }

    /// The legacy widget's provider reads UserDefaults.standard: the scenario
    /// that shows it fails, at its check of the legacy widget's card, with
    /// the theme it shows.
    @Test func theLegacyWidgetMistakeIsCaught() async throws {
        let path = "catches/legacy-widget-reads-standard.yaml"
        do {
            try await Simulation.runScenario(path)
            Issue.record("\(path) passed: the legacy widget's mistake went unnoticed")
        } catch let failure as Failure {
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            let checkLine = try #require(lines.firstIndex { $0.contains("- expect: { in: legacy, card: { theme: dark } }") }) + 1
            #expect(failure.place.filePath.hasSuffix(path))
            #expect(failure.place.line == checkLine)
            // Its last render came from the app's reload, and its provider read the extension's own domain.
            #expect(
                failure.message.contains(
                    /legacy's card should show theme = "dark", it shows "light" \(last render: render \(NotesWidget entry of [^,]+, reload-request\)/)
            )
            // A failed run keeps its root for inspection; this one failed on purpose.
            if let kept = failure.message.range(of: "kept for inspection: ") {
                let root = failure.message[kept.upperBound...].prefix { !$0.isWhitespace }
                #expect(root.contains("groupsim-scenario-"))
                try FileManager.default.removeItem(atPath: String(root))
            } else {
                Issue.record("the failure does not say where the run's root was kept: \(failure.message)")
            }
        }
    }
}
