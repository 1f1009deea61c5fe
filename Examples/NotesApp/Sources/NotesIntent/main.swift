import NotesShared
import SimulatedFoundation  // was: import Foundation

// The Shortcuts/Siri extension: a short-lived process that performs one
// action on the app group's settings and exits. `notes-intent add-note Buy
// milk` performs one; with no arguments it reads one per line.

let usage = "intents: add-note TEXT, set-theme NAME, show"

/// Performs one intent; false if there is no such intent.
func perform(_ intent: String, _ argument: String) -> Bool {
    let defaults = UserDefaults.shared
    switch intent {
    case "add-note" where !argument.isEmpty:
        let notes = NoteList.add(argument, to: defaults)
        Console.say("intent: added note \"\(argument)\" (\(notes.count) notes)")
    case "set-theme" where !argument.isEmpty:
        defaults.set(argument, forKey: SettingsKey.theme)
        Console.say("intent: theme=\(describe(defaults.string(forKey: SettingsKey.theme)))")
    case "show":
        Console.say("intent: \(settingsLine(defaults))")
    default:
        FileHandle.standardError.write(Data("notes-intent: cannot perform '\(intent) \(argument)'; \(usage)\n".utf8))
        return false
    }
    // The extension may be ended as soon as it answers: save now.
    defaults.synchronize()
    return true
}

registerDefaultSettings()
let arguments = Console.commandArguments
if let intent = arguments.first {
    exit(perform(intent, arguments.dropFirst().joined(separator: " ")) ? 0 : 64)
}
Console.readCommands(help: usage) { intent, argument in
    _ = perform(intent, argument)
}
