import Foundation
import GroupSimTesting
import Testing

/// A user's test performing App Intents: one-shot in the intent extension
/// (`runIntent`), and in a launched program's own process (`performIntent`),
/// with `settings-examples` as the user's executable.
@Suite struct IntentTests {
    /// A simulation whose failures are expected here: its root is removed whatever happened.
    private func withExpectedFailures(_ body: (Simulation) async throws -> Void) async throws {
        let simulation = try Simulation()
        defer {
            simulation.finish()
            try? FileManager.default.removeItem(atPath: simulation.root)
        }
        try await body(simulation)
    }

    @Test func runIntentReturnsTheValueAndDialogOrFailsAtTheCallersLine() async throws {
        try await withExpectedFailures { simulation in
            try simulation.install(.example)
            let added = try await simulation.runIntent("AddNoteIntent", parameters: ["text": "milk"], in: "settings-examples", arguments: ["intent"])
            #expect(added == IntentOutcome(value: 1, dialog: "Added milk. You have 1 notes."))

            let line = #line + 1
            let failure = await #expect(throws: Failure.self) {
                try await simulation.runIntent("SyncNotesIntent", in: "settings-examples", arguments: ["intent"])
            }
            #expect(failure?.place.line == line)
            #expect(
                failure?.message.contains("(status 1): SyncNotesIntent failed: the notes server is unreachable") == true, "\(failure?.message ?? "")")

            let hung = await #expect(throws: Failure.self) {
                try await simulation.runIntent(
                    "WaitForServerIntent", in: "settings-examples", arguments: ["intent"], environment: ["GROUPSIM_INTENT_TIME_LIMIT": "1"])
            }
            #expect(
                hung?.message.contains("(status 124)") == true && hung?.message.contains("did not finish within 1 s") == true,
                "\(hung?.message ?? "")")
        }
    }

    @Test func performIntentRunsInTheLaunchedProgramsProcess() async throws {
        try await withExpectedFailures { simulation in
            try simulation.install(.example)
            let app = try await simulation.launch("settings-examples", arguments: ["intents-offer"])
            try await app.waitForOutput(matching: "^ready=true$")
            let added = try await app.performIntent("AddNoteIntent", parameters: ["text": "eggs", "color": "blue"])
            #expect(added.value == 1 && added.dialog == "Added eggs. You have 1 notes.")
            let delivery = try await app.waitForChange(key: "notes", timeout: .seconds(60))
            #expect(delivery.origin == "this-process")
            #expect(try await app.performIntent("OpenNotesIntent").opensApp)

            let line = #line + 1
            let refused = await #expect(throws: Failure.self) {
                try await app.performIntent("AddNoteIntent", parameters: ["text": "x", "color": "red"])
            }
            #expect(refused?.place.line == line)
            #expect(refused?.message.contains("'red' is not one of yellow, blue, green") == true, "\(refused?.message ?? "")")
        }
    }
}
