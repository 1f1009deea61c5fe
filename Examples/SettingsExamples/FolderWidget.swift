import SimulatedAppIntents  // was: import AppIntents
import SimulatedWidgetKit  // was: import WidgetKit

// A configurable, interactive widget as iOS 17 writes one: the person picks
// the folder it shows (its WidgetConfigurationIntent, through
// AppIntentConfiguration), and its button pins that folder
// (`Button(intent: PinFolderIntent(folder: entry.folder))`). The button's
// intent is in the widget target only, so it runs in the widget's process;
// it writes the app group's suite, where the app reads it. Only the imports
// differ from the code on a device (the views are left out).

struct SelectFolderIntent: WidgetConfigurationIntent {
    static var title: LocalizedStringResource = "Select Folder"
    static var description = IntentDescription("Shows the notes of one folder.")

    @Parameter(title: "Folder", default: "Inbox")
    var folder: String

    @Parameter(title: "Show Count", default: true)
    var showCount: Bool
}

struct FolderEntry: TimelineEntry {
    let date: Date
    let folder: String
    let noteCount: Int?
    let pinned: Bool
}

struct FolderProvider: AppIntentTimelineProvider {
    func placeholder(in context: Context) -> FolderEntry {
        FolderEntry(date: Date(), folder: "Inbox", noteCount: 3, pinned: false)
    }

    func snapshot(for configuration: SelectFolderIntent, in context: Context) async -> FolderEntry {
        entry(for: configuration)
    }

    func timeline(for configuration: SelectFolderIntent, in context: Context) async -> Timeline<FolderEntry> {
        Timeline(entries: [entry(for: configuration)], policy: .never)
    }

    private func entry(for configuration: SelectFolderIntent) -> FolderEntry {
        let defaults = UserDefaults(suiteName: appGroupIdentifier)!
        let notes = defaults.stringArray(forKey: "notes") ?? []
        return FolderEntry(
            date: Date(), folder: configuration.folder, noteCount: configuration.showCount ? notes.count : nil,
            pinned: defaults.string(forKey: "pinnedFolder") == configuration.folder)
    }
}

/// The widget's button.
struct PinFolderIntent: AppIntent {
    static var title: LocalizedStringResource = "Pin Folder"

    @Parameter(title: "Folder")
    var folder: String

    init() {}

    init(folder: String) {
        self.folder = folder
    }

    func perform() async throws -> some IntentResult & ReturnsValue<String> {
        UserDefaults(suiteName: appGroupIdentifier)!.set(folder, forKey: "pinnedFolder")
        return .result(value: folder)
    }
}
