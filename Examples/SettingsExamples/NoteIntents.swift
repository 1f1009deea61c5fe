import SimulatedAppIntents  // was: import AppIntents

// App Intents as Apple's documentation writes them, only the import changed:
// an intent that adds a note to the app group's suite and returns the count
// with a dialog, one that takes a parameter of every supported type, one
// that throws, one that never finishes, and one that asks for the app.

enum NoteColor: String, AppEnum {
    case yellow
    case blue
    case green

    static var typeDisplayRepresentation: TypeDisplayRepresentation = "Note Color"
    static var caseDisplayRepresentations: [NoteColor: DisplayRepresentation] = [
        .yellow: "Yellow",
        .blue: DisplayRepresentation(title: "Blue", subtitle: "For calm notes", image: .init(systemName: "drop")),
        .green: "Green",
    ]
}

struct AddNoteIntent: AppIntent {
    static var title: LocalizedStringResource = "Add Note"
    static var description = IntentDescription("Adds a note to the shared list.")

    @Parameter(title: "Text")
    var text: String

    @Parameter(title: "Color", default: .yellow)
    var color: NoteColor

    func perform() async throws -> some IntentResult & ReturnsValue<Int> & ProvidesDialog {
        let defaults = UserDefaults(suiteName: appGroupIdentifier)!
        var notes = defaults.stringArray(forKey: "notes") ?? []
        notes.append(text)
        defaults.set(notes, forKey: "notes")
        defaults.set(color.rawValue, forKey: "lastNoteColor")
        return .result(value: notes.count, dialog: "Added \(text). You have \(notes.count) notes.")
    }
}

struct NoteDetailsIntent: AppIntent {
    static var title: LocalizedStringResource = "Note Details"

    @Parameter(title: "Title") var title: String
    @Parameter(title: "Count") var count: Int
    @Parameter(title: "Weight", default: 1.5) var weight: Double
    @Parameter(title: "Pinned", default: false) var pinned: Bool
    @Parameter(title: "Due") var due: Date?
    @Parameter(title: "Link") var link: URL?
    @Parameter(title: "Color") var color: NoteColor
    @Parameter(title: "Subtitle") var subtitle: String?

    func perform() async throws -> some IntentResult & ReturnsValue<String> {
        let due = due.map { ISO8601DateFormatter().string(from: $0) } ?? "nil"
        let details =
            "title=\(title) count=\(count) weight=\(weight) pinned=\(pinned) due=\(due) link=\(link?.absoluteString ?? "nil") "
            + "color=\(color.rawValue) subtitle=\(subtitle ?? "nil")"
        return .result(value: details)
    }
}

struct SyncNotesError: Error, CustomStringConvertible {
    var description: String { "the notes server is unreachable" }
}

struct SyncNotesIntent: AppIntent {
    static var title: LocalizedStringResource = "Sync Notes"

    func perform() async throws -> some IntentResult {
        guard UserDefaults(suiteName: appGroupIdentifier)!.bool(forKey: "serverReachable") else { throw SyncNotesError() }
        return .result()
    }
}

/// Waits for a reply that never comes (a continuation nobody resumes): the system's time limit ends it.
struct WaitForServerIntent: AppIntent {
    static var title: LocalizedStringResource = "Wait for Server"

    @Parameter(title: "Server", default: "notes.example.com")
    var server: String

    func perform() async throws -> some IntentResult & ProvidesDialog {
        await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
        return .result(dialog: "Connected to \(server).")
    }
}

struct OpenNotesIntent: AppIntent {
    static var title: LocalizedStringResource = "Open Notes"
    static var openAppWhenRun: Bool = true

    func perform() async throws -> some IntentResult {
        .result()
    }
}

/// The intents the example's executables run: one-shot (`intent`) and in a running program (`intents-offer`).
public enum NoteIntents {
    /// The intent extension's main: `settings-examples intent AddNoteIntent text=milk`.
    static func runOneShot(_ arguments: [String]) -> Never {
        GroupSim.runIntents(
            AddNoteIntent.self, NoteDetailsIntent.self, SyncNotesIntent.self, WaitForServerIntent.self, OpenNotesIntent.self, arguments: arguments)
    }

    /// An app whose intents run in its own process: it offers them, watches the notes, and runs until its input ends.
    static func offer() -> Int32 {
        GroupSim.offerIntents(AddNoteIntent.self, NoteDetailsIntent.self, SyncNotesIntent.self, WaitForServerIntent.self, OpenNotesIntent.self)
        let notes = UserDefaults(suiteName: appGroupIdentifier)!
        let observation = GroupSim.observe(notes, "notes") { change in
            ExampleCommands.show("notes", (change.newValue as? [String])?.joined(separator: ","))
        }
        ExampleCommands.show("ready", true)
        while readLine() != nil {}
        return withExtendedLifetime(observation) { 0 }
    }
}
