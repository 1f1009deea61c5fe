import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// `objectIsForced`, the managed configuration and `didChangeNotification`
/// through the Foundation face.
@Suite struct ManagedFaceTests {
    let fixture = FaceFixture()

    private func manage(_ change: ManagedChange, for bundle: String = "com.example.app") throws {
        try ManagedPreferences.update(root: SimulationRoot(path: fixture.root.path), device: "iPhone", domain: bundle) { change.apply(to: &$0) }
    }

    @Test func aForcedKeyIsForcedAndItsValueWins() throws {
        try manage(.set(key: "managedFaceTheme", value: "dark"))
        try manage(.configuration(["server": "https://mdm.example.com", "seats": 5]))
        let defaults = UserDefaults(process: fixture.process())
        #expect(defaults.objectIsForced(forKey: "managedFaceTheme"))
        #expect(!defaults.objectIsForced(forKey: "managedFaceFontSize"))
        #expect(defaults.objectIsForced(forKey: "managedFaceTheme", inDomain: "com.example.app"))
        #expect(!defaults.objectIsForced(forKey: "managedFaceTheme", inDomain: fixture.group))
        defaults.set("light", forKey: "managedFaceTheme")
        #expect(defaults.string(forKey: "managedFaceTheme") == "dark")
        let configuration = defaults.dictionary(forKey: "com.apple.configuration.managed")
        #expect(configuration?["server"] as? String == "https://mdm.example.com")
        #expect(configuration?["seats"] as? Int == 5)
    }

    @Test func anAdministratorsChangePostsDidChangeNotification() throws {
        let defaults = UserDefaults(process: fixture.process())
        let posted = DispatchSemaphore(value: 0)
        let token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: defaults, queue: nil) { _ in
            posted.signal()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try manage(.configuration(["server": "https://mdm2.example.com"]))
        #expect(posted.wait(timeout: .now() + 10) == .success)
        #expect(defaults.dictionary(forKey: "com.apple.configuration.managed")?["server"] as? String == "https://mdm2.example.com")
    }
}
