import NotesShared

#if canImport(AppIntents)
    import AppIntents
#else
    import SimulatedAppIntents
#endif
#if canImport(WidgetKit)
    import WidgetKit
#else
    import SimulatedWidgetKit
#endif
#if canImport(os)
    import os
#else
    import SimulatedOSLog
#endif

// The Shortcuts and Siri action: it adds a note to the app group's suite,
// where the app and the widget read it, and reloads the widget.

private let logger = Logger(subsystem: "com.example.notesapp.intents", category: "notes")

struct AddNoteIntent: AppIntent {
    static let title: LocalizedStringResource = "Add Note"
    static let description = IntentDescription("Adds a note to your notes.")

    @Parameter(title: "Text")
    var text: String

    func perform() async throws -> some IntentResult & ReturnsValue<Int> & ProvidesDialog {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw NoteError.emptyText }
        let notes = NoteList.add(text)
        // The widget's timeline policy is .never: it shows the note once asked to.
        WidgetCenter.shared.reloadTimelines(ofKind: notesWidgetKind)
        logger.info("added a note; \(notes.count) notes")
        return .result(value: notes.count, dialog: "Added \(text). You have \(notes.count) notes.")
    }
}

enum NoteError: LocalizedError {
    case emptyText

    var errorDescription: String? {
        switch self {
        case .emptyText: "A note needs some text."
        }
    }
}
