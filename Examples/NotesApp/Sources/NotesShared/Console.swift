import SimulatedFoundation  // was: import Foundation

// What the three executables share to be used by hand: commands read from
// standard input one line at a time, and lines printed whole, from any
// thread (observers print from the thread that tells them).

public enum Console {
    private static let lock = NSLock()

    /// Prints one line at once, unbuffered, so a reader of a pipe sees it now.
    /// (Not `print` and `fflush(nil)`: that flushes standard input too, whose
    /// lock `readLine` holds while it waits for a line.)
    public static func say(_ line: String) {
        lock.withLock {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }

    /// Reads commands until `quit` or the end of input, handing each to
    /// `perform` as its first word and the rest of the line.
    public static func readCommands(help: String, _ perform: (_ command: String, _ rest: String) -> Void) {
        while let line = readLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let command = String(trimmed.prefix { $0 != " " })
            let rest = String(trimmed.dropFirst(command.count)).trimmingCharacters(in: .whitespaces)
            switch command {
            case "quit", "exit": return
            case "help": say(help)
            default: perform(command, rest)
            }
        }
    }

    /// The program's arguments without its launch arguments (`-key value`,
    /// which fill the argument domain and are not commands).
    public static var commandArguments: [String] {
        var words: [String] = []
        var arguments = CommandLine.arguments.dropFirst()[...]
        while let word = arguments.popFirst() {
            if word.hasPrefix("-"), word.count > 1, let next = arguments.first, !next.hasPrefix("-") {
                arguments = arguments.dropFirst()
            } else if !word.hasPrefix("-") {
                words.append(word)
            }
        }
        return words
    }
}

/// A value typed on a command line: a whole number, true or false, or text.
public func typedValue(_ text: String) -> Any {
    if let number = Int(text) { return number }
    if text == "true" || text == "false" { return text == "true" }
    return text
}

/// A setting's value as the executables print it: text as is, lists in
/// brackets, Codable settings decoded.
public func describe(_ value: Any?) -> String {
    switch value {
    case nil: return "nil"
    case let text as String: return text
    case let list as [Any]: return "[" + list.map { describe($0) }.joined(separator: ", ") + "]"
    case let data as Data:
        if let options = try? JSONDecoder().decode(DisplayOptions.self, from: data) {
            return "{fontSize: \(options.fontSize), showsPreview: \(options.showsPreview)}"
        }
        return "\(data.count) bytes"
    case let number as NSNumber:
        // A boolean is an NSNumber too: its type code is a char's.
        if String(cString: number.objCType) == "c" { return number.boolValue ? "true" : "false" }
        return number.stringValue
    case let value?: return "\(value)"
    }
}

/// The line the widgets render and the app's `show` prints: every shown setting.
public func settingsLine(_ defaults: UserDefaults) -> String {
    let notes = NoteList.notes(in: defaults)
    let options = DisplayOptions.load(from: defaults)
    return "theme=\(describe(defaults.string(forKey: SettingsKey.theme))) "
        + "accent=\(describe(defaults.string(forKey: SettingsKey.accent))) "
        + "notes=\(notes.count) last=\(notes.last ?? "-") fontSize=\(options.fontSize)"
}
