import SimulatedFoundation  // was: import Foundation — the only change this file needs

// Settings read and written directly, registered at launch, and watched
// for changes made inside or outside the app.

/// Registers the editor's initial settings at launch.
func registerEditorDefaults() {
    UserDefaults().register(defaults: [
        "ShowLineNumbers": false,
        "TitleString": "Untitled",
    ])
}

/// Changes three settings and reads two back.
func changeEditorSettings(showLineNumbers: Bool, title: String) -> (showLineNumbers: Bool, title: String?) {
    let defaults = UserDefaults()
    // Change settings.
    defaults.set(showLineNumbers, forKey: "ShowLineNumbers")
    defaults.set(title, forKey: "TitleString")
    defaults.set(true, forKey: "CacheDataAggressively")
    // Retrieve settings.
    let boolValue = defaults.bool(forKey: "ShowLineNumbers")
    let stringValue = defaults.string(forKey: "TitleString")
    return (boolValue, stringValue)
}

/// Reports every change of ShowLineNumbers, whoever makes it: another
/// process of the app, or the `defaults` tool. Writing the value it already
/// has reports nothing.
///
/// Apple's version is an NSObject that calls `addObserver(_:forKeyPath:
/// options:context:)` and overrides `observeValue(forKeyPath:of:change:
/// context:)`: key-value observing needs the Objective-C runtime, which
/// Linux has not. The simulated UserDefaults delivers the same changes
/// through `observe(_:_:)` (docs/api.md).
class LineNumbersObserver {
    let defaults = UserDefaults()
    private var observation: UserDefaults.Observation?

    func configureObserver(_ report: @escaping (String) -> Void) {
        observation = defaults.observe("ShowLineNumbers") { change in
            report("Setting changed: \(change.key) from \(change.oldValue.map { "\($0)" } ?? "nil") to \(change.newValue.map { "\($0)" } ?? "nil")")
        }
    }
}
