import NotesShared

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

// The app. In Xcode, `@main struct NotesApp: App` shows SettingsView and the
// notes; here its screen is the terminal: a command a line on standard
// input, and what changed, a line each.

let help = """
    commands:
      theme NAME        the theme (light, dark, black …)
      accent NAME       the accent colour, kept in iCloud
      note TEXT         add a note
      font-size N       the display options' font size, 6 to 72
      preview on|off    the display options' previews (the widget does not show them)
      show              the settings and the notes
      quit
    """

private let logger = Logger(subsystem: "com.example.notesapp", category: "app")

/// The widget's timeline policy is `.never`: after changing what it shows,
/// the app asks for a new timeline (free while the app is in the foreground).
@Sendable func reloadWidget() {
    WidgetCenter.shared.reloadTimelines(ofKind: notesWidgetKind)
    logger.debug("asked to reload \(notesWidgetKind, privacy: .public)")
}

let settings = SettingsView()
let observer = SettingsObserver()
observer.observe(.shared)
let cloudSync = CloudSync(didApplyChanges: reloadWidget)
cloudSync.start()
Console.say(settings.summary)

Console.readCommands(help: help) { command, argument in
    switch (command, argument) {
    case ("theme", let name) where !name.isEmpty:
        settings.theme = name
        Console.say("theme=\(settings.theme)")
    case ("accent", let name) where !name.isEmpty:
        settings.accent = name
        Console.say("accent=\(settings.accent)")
    case ("note", let text) where !text.isEmpty:
        let notes = NoteList.add(text)
        Console.say("notes=\(notes.count)")
    case ("font-size", let size):
        guard let size = Int(size), (6...72).contains(size) else {
            return Console.say("font-size takes a whole number from 6 to 72, not '\(size)'")
        }
        settings.displayOptions.fontSize = size
        Console.say("fontSize=\(size)")
    case ("preview", let state) where ["on", "off"].contains(state):
        settings.displayOptions.showsPreview = state == "on"
        return Console.say("preview=\(state)")  // not on the widget: no reload
    case ("show", ""):
        return Console.say(settings.summary)
    default:
        return Console.say("cannot do '\(command) \(argument)' (help lists the commands)")
    }
    reloadWidget()
}
