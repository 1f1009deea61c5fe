import NotesShared
import SimulatedFoundation  // was: import Foundation

/// Prints each change of a shown setting, whoever made it: this app, the
/// intent extension, iCloud through `CloudSync`.
final class SettingsObserver: NSObject {
    func observe(_ defaults: UserDefaults) {
        for key in SettingsKey.shown {
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
