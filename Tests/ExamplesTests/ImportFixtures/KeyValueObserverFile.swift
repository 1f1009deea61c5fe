// Apple's key-value observer in a file that imports Foundation and
// SimulatedFoundation: two `NSObject` are visible, and the compiler refuses
// until the module switches NSObject too (NSObjectSwitch.swift). Never
// silent. (With Foundation alone, the key-value observing types are not
// found at all.)
import Foundation
import SimulatedFoundation

final class ThemeObserver: NSObject {
    func start() {
        UserDefaults.standard.addObserver(self, forKeyPath: "theme", options: [.new], context: nil)
    }

    override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {}
}
