import GroupDefaults
import PropertyList
import SimulatedFoundation
import Synchronization
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
        let defaults = GroupSim.defaults(of: fixture.process())
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
        let defaults = GroupSim.defaults(of: fixture.process())
        let posted = DispatchSemaphore(value: 0)
        let token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: defaults, queue: nil) { _ in
            posted.signal()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try manage(.configuration(["server": "https://mdm2.example.com"]))
        #expect(posted.wait(timeout: .now() + 10) == .success)
        #expect(defaults.dictionary(forKey: "com.apple.configuration.managed")?["server"] as? String == "https://mdm2.example.com")
    }

    @Test func anInstanceLetGoIsFreedAndNeverPostedFor() throws {
        weak var released: UserDefaults?
        do {
            let gone = GroupSim.defaults(of: fixture.process())
            released = gone
            _ = gone.string(forKey: "managedFaceTheme")
        }
        // Listening for managed changes must not keep an instance alive.
        #expect(released == nil)
        let live = GroupSim.defaults(of: fixture.process())
        let others = Mutex(0)
        let livePosted = DispatchSemaphore(value: 0)
        let token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: nil, queue: nil) { note in
            guard let poster = note.object as? UserDefaults, GroupSim.process(of: poster) === GroupSim.process(of: live) else { return }
            if poster === live { livePosted.signal() } else { others.withLock { $0 += 1 } }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try manage(.configuration(["server": "https://mdm3.example.com"]))
        #expect(livePosted.wait(timeout: .now() + 10) == .success)
        let postsForOthers = others.withLock { $0 }
        #expect(postsForOthers == 0)
    }

    @Test func instancesComingAndGoingWhileChangesArriveAreSafe() throws {
        let process = fixture.process()
        let pushes = 20
        let root = fixture.root.path
        let pusher = Thread {
            for push in 0..<pushes {
                _ = try? ManagedPreferences.update(root: SimulationRoot(path: root), device: "iPhone", domain: "com.example.app") {
                    ManagedChange.configuration(["push": .integer(Int64(push))]).apply(to: &$0)
                }
            }
        }
        pusher.start()
        let lastPushSeen = Atomic(false)
        let keeper = GroupSim.defaults(of: process)
        let token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: keeper, queue: nil) { _ in
            if keeper.dictionary(forKey: "com.apple.configuration.managed")?["push"] as? Int == pushes - 1 {
                lastPushSeen.store(true, ordering: .releasing)
            }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        // Instances made and let go while the pushes are delivered: a post must never reach one being freed.
        let deadline = ContinuousClock.now + .seconds(20)
        while !lastPushSeen.load(ordering: .acquiring) && ContinuousClock.now < deadline {
            _ = GroupSim.defaults(of: process).string(forKey: "managedFaceTheme")
        }
        let seen = lastPushSeen.load(ordering: .acquiring)
        #expect(seen, "the last managed push never reached the instance kept alive")
    }
}
