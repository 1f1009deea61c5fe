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
/// Apple's version, unchanged: an NSObject that calls `addObserver(_:
/// forKeyPath:options:context:)` (here on an instance it does not keep: the
/// registration keeps it) and overrides `observeValue(forKeyPath:of:change:
/// context:)`.
class LineNumbersObserver: NSObject {
    private var report: ((String) -> Void)?

    func configureObserver(_ report: @escaping (String) -> Void) {
        self.report = report
        UserDefaults().addObserver(self, forKeyPath: "ShowLineNumbers", options: [.old, .new], context: nil)
    }

    override func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?) {
        guard keyPath == "ShowLineNumbers", let change else { return }
        report?("Setting changed: \(keyPath!) from \(change[.oldKey] ?? "nil") to \(change[.newKey] ?? "nil")")
    }
}
