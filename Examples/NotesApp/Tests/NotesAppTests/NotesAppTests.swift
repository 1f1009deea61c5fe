import Foundation
import GroupSimTesting
import Testing

/// The app group's suite: what the app's targets read and write.
let group = "group.com.example.notesapp"

/// The app's executables as the app, widget and intent extension of NotesApp
/// (`notes-app.yaml`) on a simulated iPhone. `swift test` runs in the
/// package's folder, where the manifest and the scenario files are.
@Suite struct NotesAppTests {
    @Test func theWidgetSeesTheAppsWrite() async throws {
        try await withSimulation { simulation in
            try simulation.install(.file("notes-app.yaml"))
            let widget = try await simulation.launch("notes-widget", as: .widget)
            try await widget.waitForOutput(matching: "^widget: render #1 \\(launch\\) theme=light ")
            let app = try await simulation.launch("notes-app")
            try await app.waitForOutput(matching: "^notes-app: ready ")

            try app.sendInput("set theme dark")
            // The widget's key-value observer on the suite hears the other process's write...
            let delivery = try await widget.waitForChange(key: "theme", value: "dark", mechanism: .keyValueObserver)
            #expect(delivery.origin == "other-process")
            #expect(delivery.domain == group)
            // ...and the widget renders it.
            try await widget.waitForOutput(matching: "^widget: render #\\d+ \\(theme changed\\) theme=dark ")
            #expect(try await widget.value(forKey: "theme", suite: group) == "dark")
        }
    }

    @Test func aLaunchArgumentWinsInItsOwnProcessOnly() async throws {
        try await withSimulation { simulation in
            try simulation.install(.file("notes-app.yaml"))
            let app = try await simulation.launch("notes-app", arguments: ["-theme", "dark"])
            let widget = try await simulation.launch("notes-widget", as: .widget)
            try await app.waitForOutput(matching: "^notes-app: ready theme=dark ")
            try await widget.waitForOutput(matching: "^widget: render #1 \\(launch\\) theme=light ")
            #expect(try await app.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "dark", domain: "NSArgumentDomain"))
            #expect(try await widget.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "light", domain: "NSRegistrationDomain"))

            // The app stores black in the suite: the widget shows it; in the app the argument still wins.
            try app.sendInput("set theme black")
            try await widget.waitForChange(key: "theme", value: "black")
            try await widget.waitForOutput(matching: "theme=black ")
            try await app.waitForOutput(matching: "^theme=dark$")
            #expect(try await app.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "dark", domain: "NSArgumentDomain"))
            #expect(try await widget.effectiveValue(forKey: "theme", suite: group) == EffectiveValue(value: "black", domain: group))
        }
    }

    @Test func theIntentsNoteReachesTheApp() async throws {
        try await withSimulation { simulation in
            try simulation.install(.file("notes-app.yaml"))
            let app = try await simulation.launch("notes-app")
            try await app.waitForOutput(matching: "^notes-app: ready .* notes=0 ")
            // The extension performs the intents it reads, one per line, and exits at the end of its input.
            let intent = try await simulation.launch("notes-intent", as: .intent)
            try intent.sendInput("add-note buy milk")
            intent.closeInput()
            try await intent.waitForExit(status: 0)
            #expect(intent.output.contains("intent: added note \"buy milk\" (1 notes)"))

            let delivery = try await app.waitForChange(key: "notes", value: ["buy milk"], mechanism: .keyValueObserver)
            #expect(delivery.origin == "other-process")
            try await app.waitForOutput(matching: "^changed notes=\\[buy milk\\]$")
        }
    }

    /// The app's own CloudSync on two devices signed in to one account: a
    /// sync- setting written on the iPhone comes down into the iPad's suite.
    @Test func aSyncedSettingReachesTheOtherDevice() async throws {
        try await withSimulation { simulation in
            try await simulation.addDevice("iPhone", iCloudAccount: "alice")
            try await simulation.addDevice("iPad", iCloudAccount: "alice")
            try simulation.install(.file("notes-app.yaml"), on: "iPhone")
            try simulation.install(.file("notes-app.yaml"), on: "iPad")
            let phone = try await simulation.launch("notes-app", on: "iPhone")
            let pad = try await simulation.launch("notes-app", on: "iPad")
            try await phone.waitForOutput(matching: "^notes-app: ready ")
            try await pad.waitForOutput(matching: "^notes-app: ready ")

            try phone.sendInput("set sync-accent green")
            try await phone.waitForOutput(matching: "^icloud: up sync-accent=green$")
            try await pad.waitForOutput(matching: "^icloud: down sync-accent=green$", timeout: .seconds(20))
            #expect(try await pad.value(forKey: "sync-accent", suite: group) == "green")
            #expect(try await pad.cloudValue(forKey: "sync-accent") == "green")
            // Not prefixed: it stays on the iPhone.
            try phone.sendInput("set theme dark")
            try await phone.waitForOutput(matching: "^theme=dark$")
            try await simulation.waitForCloud()
            #expect(try await pad.cloudValue(forKey: "theme") == nil)
            #expect(try await pad.value(forKey: "theme", suite: group) == "light")
        }
    }

    /// The legacy widget reads UserDefaults.standard: the scenario that shows
    /// it fails, at its check of the legacy widget's theme, with the value it
    /// found and the widget's own output.
    @Test func theLegacyWidgetMistakeIsCaught() async throws {
        let path = "catches/legacy-widget-reads-standard.yaml"
        do {
            try await Simulation.runScenario(path)
            Issue.record("\(path) passed: the legacy widget's mistake went unnoticed")
        } catch let failure as Failure {
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            let checkLine = try #require(lines.firstIndex { $0.contains("- expect: { in: legacy, key: theme, value: dark }") }) + 1
            #expect(failure.place.filePath.hasSuffix(path))
            #expect(failure.place.line == checkLine)
            #expect(failure.message.contains(#"legacy: theme should be "dark", found "light" (from NSRegistrationDomain)"#))
            // What the legacy widget printed: its one render, with the registered theme.
            #expect(failure.message.contains("legacy-widget: render #1 (launch) theme=light"))
            // The widget that reads the suite did show the app's theme.
            #expect(failure.message.contains("theme=dark"))
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
