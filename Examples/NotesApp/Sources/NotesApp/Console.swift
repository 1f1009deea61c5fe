import NotesShared

#if canImport(Darwin)
    import Foundation
#else
    import SimulatedFoundation  // Linux: Foundation with groupsim's UserDefaults
#endif

// The app's screen, in a terminal: commands read from standard input one
// line at a time, and lines printed whole, from any thread (observers print
// from the thread that tells them).

enum Console {
    private static let lock = NSLock()

    /// Prints one line at once, unbuffered, so a reader of a pipe sees it now.
    /// (Not `print` and `fflush(nil)`: that flushes standard input too, whose
    /// lock `readLine` holds while it waits for a line.)
    static func say(_ line: String) {
        lock.withLock {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }

    /// Reads commands until `quit` or the end of input, handing each to
    /// `perform` as its first word and the rest of the line.
    static func readCommands(help: String, _ perform: (_ command: String, _ argument: String) -> Void) {
        while let line = readLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let command = String(trimmed.prefix { $0 != " " })
            let argument = String(trimmed.dropFirst(command.count)).trimmingCharacters(in: .whitespaces)
            switch command {
            case "quit", "exit": return
            case "help": say(help)
            default: perform(command, argument)
            }
        }
    }
}

/// A setting's value as the app shows it: text as is, lists in brackets,
/// the Codable display options decoded.
func describe(_ value: Any?) -> String {
    switch value {
    case nil: return "nil"
    case let text as String: return text
    case let list as [Any]: return "[" + list.map { describe($0) }.joined(separator: ", ") + "]"
    case let data as Data:
        if let options = try? JSONDecoder().decode(DisplayOptions.self, from: data) {
            return "{fontSize: \(options.fontSize), showsPreview: \(options.showsPreview)}"
        }
        return "\(data.count) bytes"
    case let value?: return "\(value)"
    }
}
