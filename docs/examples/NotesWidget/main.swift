// The widget docs/testing.md's tests launch as "NotesWidget": it observes the app group's theme with a key path, as a
// widget written for Apple platforms does, and says each change on its standard output (`theme=dark`).
import SimulatedFoundation

extension UserDefaults {
    var theme: String? { string(forKey: "theme") }
}

/// One line on stdout, at once: `print` holds its lines back while stdout is a pipe.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let group = UserDefaults(suiteName: "group.com.example.notes")!
let observation = group.observe(\.theme, options: [.new]) { defaults, _ in say("theme=\(defaults.theme ?? "none")") }
while readLine() != nil {}
observation.invalidate()
