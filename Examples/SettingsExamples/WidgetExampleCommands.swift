import SimulatedAppIntents
import SimulatedWidgetKit

/// The widget examples as `settings-examples` commands: the widget's own
/// process (run as the app's widget target) and the app's WidgetCenter calls.
enum WidgetExampleCommands {
    static func run(_ command: String, _ rest: [String]) -> Int32 {
        switch command {
        case "widget":
            let policies: [String: (Date) -> TimelineReloadPolicy] = [
                "at-end": { _ in .atEnd }, "never": { _ in .never },
                // Half way between the second and third entries.
                "after": { .after($0.addingTimeInterval(90 * 60)) },
            ]
            guard let name = rest.first, let policy = policies[name] else { return ExampleCommands.fail("widget at-end|after|never") }
            GroupSim.runWidget(kind: "Notes", provider: NotesProvider(policy: policy))
        case "widget-forgetful":
            GroupSim.runWidget(kind: "Notes", provider: ForgetfulProvider())
        case "widget-twice":
            GroupSim.runWidget(kind: "Notes", provider: TwiceProvider())
        case "widget-folder":
            // Its configuration is the command line's NAME=VALUE words: `widget-folder folder=Work`.
            GroupSim.runWidget(kind: "Folder", provider: FolderProvider(), intents: [PinFolderIntent.self])
        case "widget-standard":
            GroupSim.runWidget(kind: "Notes", provider: StandardNotesProvider())
        case "widget-theme":
            GroupSim.runWidget(kind: "Theme", provider: ThemeWidgetProvider())
        case "widget-favorite":
            if rest.first == "group" { FavoriteStore.defaults = UserDefaults(suiteName: appGroupIdentifier)! }
            GroupSim.runWidget(kind: "Favorite", provider: FavoriteProvider(), intents: [ToggleFavoriteIntent.self])
        case "widget-intents":
            GroupSim.runIntents(SaveNoteIntent.self, SaveNoteAndReloadIntent.self, arguments: rest)
        case "widget-refresher":
            // Each line of input is a note the app fetched in the background.
            while let line = readLine() {
                NotesRefresh.handle(fetched: line)
                ExampleCommands.show("saved", line)
            }
        case "widget-reload":
            if let kind = rest.first {
                WidgetCenter.shared.reloadTimelines(ofKind: kind)
            } else {
                WidgetCenter.shared.reloadAllTimelines()
            }
            ExampleCommands.show("reloaded", rest.first ?? "all")
        case "widget-configurations":
            let done = DispatchSemaphore(value: 0)
            WidgetCenter.shared.getCurrentConfigurations { result in
                switch result {
                case .success(let widgets): ExampleCommands.show("widgets", widgets.map(describe).joined(separator: ","))
                case .failure(let error): ExampleCommands.show("error", error)
                }
                done.signal()
            }
            done.wait()
        default:
            return ExampleCommands.fail(ExampleCommands.usage)
        }
        return 0
    }

    /// `kind:family`, and a configurable widget's folder.
    static func describe(_ widget: WidgetInfo) -> String {
        "\(widget.kind):\(widget.family)" + (widget.widgetConfigurationIntent(of: SelectFolderIntent.self).map { ":folder=\($0.folder)" } ?? "")
    }
}
