import NotesShared
import SimulatedFoundation  // was: import Foundation

// The app: it registers its initial settings, keeps the sync- settings in
// iCloud, shows the settings and changes them on command.

let help = """
    commands:
      set KEY VALUE       store a setting (a whole number, true/false, or text)
      remove KEY          remove a stored setting (its registered value shows again)
      get KEY             a setting's effective value
      note TEXT           add a note
      font-size N         the Codable display options: font size
      preview on|off      the Codable display options: previews
      show                every shown setting
      sync                save now (UserDefaults and iCloud)
      quit
    """

registerDefaultSettings()
let defaults = UserDefaults.shared
let observer = SettingsObserver()
observer.observe(defaults)
let cloudSync = CloudSync(report: { Console.say($0) })
cloudSync.start()
Console.say("notes-app: ready \(settingsLine(defaults))")

Console.readCommands(help: help) { command, rest in
    let words = rest.split(separator: " ", maxSplits: 1).map(String.init)
    switch (command, words.count) {
    case ("set", 2):
        defaults.set(typedValue(words[1]), forKey: words[0])
        Console.say("\(words[0])=\(describe(defaults.object(forKey: words[0])))")
    case ("remove", 1):
        defaults.removeObject(forKey: words[0])
        Console.say("\(words[0])=\(describe(defaults.object(forKey: words[0])))")
    case ("get", 1):
        Console.say("\(words[0])=\(describe(defaults.object(forKey: words[0])))")
    case ("note", 1...):
        NoteList.add(rest, to: defaults)
    case ("font-size", 1):
        guard let size = Int(words[0]), (6...72).contains(size) else {
            return Console.say("font-size takes a whole number from 6 to 72, not '\(words[0])'")
        }
        var options = DisplayOptions.load(from: defaults)
        options.fontSize = size
        options.save(to: defaults)
    case ("preview", 1) where ["on", "off"].contains(words[0]):
        var options = DisplayOptions.load(from: defaults)
        options.showsPreview = words[0] == "on"
        options.save(to: defaults)
    case ("show", 0):
        Console.say(settingsLine(defaults))
    case ("sync", 0):
        let saved = defaults.synchronize()
        let uploaded = NSUbiquitousKeyValueStore.default.synchronize()
        Console.say("synced defaults=\(saved) icloud=\(uploaded)")
    default:
        Console.say("cannot do '\(rest.isEmpty ? command : command + " " + rest)' (help lists the commands)")
    }
}
