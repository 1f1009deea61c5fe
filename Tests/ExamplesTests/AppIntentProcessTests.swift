import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// The examples' App Intents (`Examples/SettingsExamples/NoteIntents.swift`,
/// written as Apple's documentation writes them) run as real processes: the
/// intent extension's one-shot (`settings-examples intent …`, whose main is
/// `GroupSim.runIntents`) and a running app's process (`intents-offer`,
/// `GroupSim.offerIntents`), each driven over its control channel.
@Suite struct AppIntentProcessTests {
    static let group = "group.com.example.notes"

    /// What a one-shot run said: its status, its events, its output.
    struct OneShot {
        let status: Int32
        let events: [AppEvent]
        let stdout: String
        let stderr: String

        var result: AppEvent? { events.first { if case .intentResult = $0 { true } else { false } } }
        var error: String? { events.lazy.compactMap { if case .error(let message) = $0 { message } else { nil } }.first }
    }

    /// `settings-examples intent WORDS…` as the example app's intent extension, to its exit.
    private func runOnce(_ words: [String], root: TemporaryRoot, environment: [String: String] = [:]) throws -> OneShot {
        let program = try AppProcess(
            controlling: [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--target", "intent", "--",
                BuiltExecutable.path("settings-examples"), "intent",
            ] + words, root: root, environment: environment)
        // Generous: only a hang would take this long.
        let status = try program.process.waitForExit(timeout: 120)
        #expect(program.channel?.waitUntilClosed(timeout: 60) == true)
        var events: [AppEvent] = []
        while let event = try? program.event(timeout: 0.01, { _ in true }) { events.append(event) }
        return OneShot(status: status, events: events, stdout: program.process.allLines.joined(separator: "\n"), stderr: program.process.stderr)
    }

    @Test func aOneShotReportsItsValueAndDialogAndItsWriteIsOnDisk() throws {
        let root = try rootWithExampleApp()
        let first = try runOnce(["AddNoteIntent", "text=milk"], root: root)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.result == .intentResult(intent: "AddNoteIntent", key: nil, value: 1, dialog: "Added milk. You have 1 notes."))
        #expect(first.stdout.contains("AddNoteIntent: value=1 dialog=\"Added milk. You have 1 notes.\""), "\(first.stdout)")

        // A launch argument stays the argument domain's; the parameter after the name is the intent's.
        let second = try runOnce(["AddNoteIntent", "color=blue", "text=eggs", "-theme", "dark"], root: root)
        #expect(second.result == .intentResult(intent: "AddNoteIntent", key: nil, value: 2, dialog: "Added eggs. You have 2 notes."))
        let notes = try groupsim(["defaults", "read", Self.group, "notes"], root: root)
        #expect(notes.stdout.contains("milk") && notes.stdout.contains("eggs"), "\(notes.stdout)")
        #expect(try groupsim(["defaults", "read", Self.group, "lastNoteColor"], root: root).trimmedOutput == "blue")
    }

    @Test func parametersOfEverySupportedTypeAndDefaults() throws {
        let root = try rootWithExampleApp()
        let all = try runOnce(
            [
                "NoteDetailsIntent", "title=Groceries", "count=3", "weight=2.25", "pinned=true", "due=2026-11-22T10:00:00Z",
                "link=https://example.com/list", "color=green", "subtitle=weekly",
            ], root: root)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(
            all.result
                == .intentResult(
                    intent: "NoteDetailsIntent", key: nil,
                    value: .string(
                        "title=Groceries count=3 weight=2.25 pinned=true due=2026-11-22T10:00:00Z link=https://example.com/list color=green subtitle=weekly"
                    )))
        // Left out: the declared defaults, and nil for the optionals.
        let defaults = try runOnce(["NoteDetailsIntent", "title=T", "count=-1", "color=yellow"], root: root)
        #expect(
            defaults.result
                == .intentResult(
                    intent: "NoteDetailsIntent", key: nil,
                    value: .string("title=T count=-1 weight=1.5 pinned=false due=nil link=nil color=yellow subtitle=nil")))
    }

    /// Each request that cannot run is refused before `perform()`, with status 2 and what to do.
    @Test func invalidRequestsAreRefusedNamingWhatIsWrong() throws {
        let root = try rootWithExampleApp()
        let cases: [([String], [String])] = [
            (["Fly"], ["unknown intent 'Fly'", "AddNoteIntent, NoteDetailsIntent, OpenNotesIntent, SyncNotesIntent, WaitForServerIntent"]),
            (["AddNoteIntent", "text=a", "size=3"], ["AddNoteIntent has no parameter 'size'", "text (String), color (NoteColor)"]),
            (["AddNoteIntent"], ["AddNoteIntent needs parameter text (String"]),
            (
                ["NoteDetailsIntent", "title=T", "count=many", "color=blue"],
                ["parameter count of NoteDetailsIntent is Int: 'many' is not a whole number"]
            ),
            (
                ["AddNoteIntent", "text=a", "color=purple"],
                ["parameter color of AddNoteIntent is NoteColor: 'purple' is not one of yellow, blue, green"]
            ),
            (
                ["NoteDetailsIntent", "title=T", "count=1", "color=blue", "due=tomorrow"],
                ["parameter due of NoteDetailsIntent is Date?: 'tomorrow' is not an ISO 8601 date"]
            ),
            (["NoteDetailsIntent", "title=T", "count=1", "color=blue", "link=nowhere"], ["'nowhere' is not a URL with a scheme"]),
            (
                ["NoteDetailsIntent", "title=T", "count=1", "color=blue", "pinned=maybe"],
                ["pinned of NoteDetailsIntent is Bool: 'maybe' is not true or false"]
            ),
            (["text=a"], ["comes before the intent's name"]),
        ]
        for (words, phrases) in cases {
            let run = try runOnce(words, root: root)
            #expect(run.status == 2, "\(words): \(run.stderr)")
            #expect(run.result == nil)
            for phrase in phrases {
                #expect(run.error?.contains(phrase) == true, "\(words): \(run.error ?? "no error event")")
                #expect(run.stderr.contains(phrase), "\(words): \(run.stderr)")
            }
        }
        // Nothing ran: no note was stored.
        #expect(try groupsim(["defaults", "read", Self.group, "notes"], root: root).status != 0)
    }

    @Test func aThrownErrorFailsTheRunWithItsDescription() throws {
        let root = try rootWithExampleApp()
        let failed = try runOnce(["SyncNotesIntent"], root: root)
        #expect(failed.status == 1)
        #expect(failed.error == "SyncNotesIntent failed: the notes server is unreachable")
        #expect(failed.result == nil)
        _ = try groupsim(["defaults", "write", Self.group, "serverReachable", "-bool", "true"], root: root)
        let synced = try runOnce(["SyncNotesIntent"], root: root)
        #expect(synced.status == 0 && synced.result == .intentResult(intent: "SyncNotesIntent", key: nil, value: nil), "\(synced.stderr)")
    }

    /// A `perform()` that never returns is ended at the time limit, naming the intent and its parameters.
    @Test func aHungPerformIsBoundedByTheTimeLimit() throws {
        let root = try rootWithExampleApp()
        let started = ContinuousClock.now
        let hung = try runOnce(["WaitForServerIntent"], root: root, environment: ["GROUPSIM_INTENT_TIME_LIMIT": "1"])
        #expect(hung.status == 124)
        #expect(hung.error?.contains("WaitForServerIntent (server=\"notes.example.com\") did not finish within 1 s") == true, "\(hung.error ?? "")")
        #expect(ContinuousClock.now - started < .seconds(60))
        let wrong = try runOnce(["OpenNotesIntent"], root: root, environment: ["GROUPSIM_INTENT_TIME_LIMIT": "soon"])
        #expect(wrong.stderr.contains("GROUPSIM_INTENT_TIME_LIMIT=soon is not a number of seconds"), "\(wrong.stderr)")
    }

    @Test func openAppWhenRunIsReportedWithTheResult() throws {
        let root = try rootWithExampleApp()
        let run = try runOnce(["OpenNotesIntent"], root: root)
        #expect(run.result == .intentResult(intent: "OpenNotesIntent", key: nil, value: nil, dialog: nil, opensApp: true))
    }

    /// `intents-offer`: the app's own process performs the intent; its write is this process's to its observers.
    @Test func anIntentPerformedInTheRunningAppsProcess() throws {
        let root = try rootWithExampleApp()
        let app = try AppProcess(
            controlling: [
                BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--",
                BuiltExecutable.path("settings-examples"), "intents-offer",
            ], root: root, environment: ["GROUPSIM_INTENT_TIME_LIMIT": "2"])
        _ = try app.process.waitForLine(timeout: 60) { $0 == "ready=true" }
        let answer = try app.request(.performIntent(name: "AddNoteIntent", parameters: ["text": "milk"]), timeout: 60)
        #expect(answer.ok && answer.value == 1 && answer.dialog == "Added milk. You have 1 notes." && !answer.opensApp, "\(answer.fields)")
        let delivery = try app.event(timeout: 60) { if case .delivery(let delivery) = $0 { delivery.key == "notes" } else { false } }
        guard case .delivery(let seen) = delivery else { return }
        #expect(seen.origin == "this-process" && seen.mechanism == .observe)
        #expect(
            try app.event(timeout: 60) { if case .intentResult = $0 { true } else { false } }
                == .intentResult(intent: "AddNoteIntent", key: nil, value: 1, dialog: "Added milk. You have 1 notes."))

        let failed = try app.request(.performIntent(name: "SyncNotesIntent", parameters: [:]), timeout: 60)
        #expect(!failed.ok && failed.error == "SyncNotesIntent failed: the notes server is unreachable")
        let invalid = try app.request(.performIntent(name: "AddNoteIntent", parameters: ["colour": "blue"]), timeout: 60)
        #expect(invalid.error?.contains("AddNoteIntent has no parameter 'colour'") == true, "\(invalid.fields)")
        let hung = try app.request(.performIntent(name: "WaitForServerIntent", parameters: ["server": "a.example"]), timeout: 60)
        #expect(hung.error?.contains("WaitForServerIntent (server=\"a.example\") did not finish within 2 s") == true, "\(hung.fields)")
        // The app goes on: the next intent runs in it.
        #expect(try app.request(.performIntent(name: "AddNoteIntent", parameters: ["text": "eggs"]), timeout: 60).value == 2)
        // Its input's end ends it, the intent still hung in it included.
        app.process.closeStdin()
        #expect(try app.process.waitForExit(timeout: 60) == 0)
    }

    /// The event's two shapes: a built-in intent's as it always was, an App Intent's with its value, dialog and openAppWhenRun.
    @Test func intentResultEventsRoundTripThroughTheCodec() throws {
        let builtIn = ControlProtocol.event(.intentResult(intent: "Count", key: "count", value: 1))
        #expect(builtIn.hasPrefix("{\"event\":\"intent-result\",\"intent\":\"Count\",\"key\":\"count\",\"value\":1,\"time\":"), "\(builtIn)")
        let appIntent: AppEvent = .intentResult(intent: "AddNoteIntent", key: nil, value: 2, dialog: "Added \"x\".", opensApp: true)
        let line = ControlProtocol.event(appIntent)
        #expect(!line.contains("\"key\""), "\(line)")
        guard case .event(let decoded, _) = try ControlProtocol.decode(line).message else {
            Issue.record("not an event")
            return
        }
        #expect(decoded == appIntent)
        let response = ControlProtocol.response(id: "7", result: .intent(value: nil, dialog: nil, opensApp: false))
        #expect(response == "{\"id\":7,\"ok\":true,\"value\":null,\"dialog\":null,\"opensApp\":false}")
    }
}
