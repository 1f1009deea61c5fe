import NotesShared

#if canImport(Darwin)
    import Foundation
#else
    import SimulatedFoundation  // Linux: Foundation with groupsim's UserDefaults
#endif

/// Shows each change of a setting on the app's screen, whoever made it: this
/// app, the intent extension, iCloud through `CloudSync`. (A SwiftUI view
/// showing an `@AppStorage` property is updated by SwiftUI itself.)
final class SettingsObserver: NSObject {
    static let keys = [SettingsKey.theme, SettingsKey.accent, SettingsKey.notes, SettingsKey.displayOptions]

    func observe(_ defaults: UserDefaults) {
        for key in Self.keys {
            defaults.addObserver(self, forKeyPath: key, options: [.new], context: nil)
        }
    }

    override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {
        guard let keyPath else { return }
        Console.say("changed \(keyPath)=\(describe(change?[.newKey]))")
    }
}
