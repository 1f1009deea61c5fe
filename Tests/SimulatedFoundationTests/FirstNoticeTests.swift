import CloudDevice
import CloudModel
import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// Apple's pattern for the iCloud store: make it, register for
/// `didChangeExternallyNotification`, call `synchronize()`. The first
/// download's notice reaches the observer wherever in that launch it arrives;
/// before, one that arrived between the store's making and the registration
/// was posted to no one, and the app never learnt that its first sync was done.
@Suite struct FirstNoticeTests {
    /// When, in the app's launch, the device's copy takes the first download.
    enum Moment: String, CaseIterable, Sendable {
        case whileTheAppHasNotRegistered, betweenRegisteringAndSynchronizing, afterSynchronizing
    }

    /// The first download written into the device's copy, as the sync agent
    /// writes it, and heard by this process (as the app hears it, some time later).
    static func download(into fixture: FaceFixture, key: String = "theme") throws {
        let domain = try DeviceCloud(root: SimulationRoot(path: fixture.root.path), device: "iPhone").storeDomain("com.example.kvs")
        try domain.transaction { fields in
            var copy = try StoreCopy(fields, path: domain.file.path)
            let record = CloudRecord(key: key, value: .string("dark"), stamp: ChangeStamp(time: 100, device: "iPad", sequence: 1), revision: 1)
            _ = copy.apply([record], revision: 1, initial: true)
            fields = copy.plist
        }
        PersistentDomain.deliverPendingNotifications()
    }

    static func isFirstDownload(_ info: [AnyHashable: Any]) -> Bool {
        (info[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber)?.intValue == NSUbiquitousKeyValueStoreInitialSyncChange
            && (info[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String]) == ["theme"]
    }

    @Test(arguments: Moment.allCases)
    func theFirstDownloadsNoticeReachesAnAppThatRegistersInApplesOrder(_ moment: Moment) throws {
        let fixture = FaceFixture()
        let store = GroupSim.ubiquitousStore(of: fixture.process(), environment: [GroupSim.keyValueStoreVariable: "com.example.kvs"])
        if moment == .whileTheAppHasNotRegistered { try Self.download(into: fixture) }
        let received = NotificationLog()
        let token = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
        ) { received.add($0.userInfo ?? [:]) }
        defer { NotificationCenter.default.removeObserver(token) }
        if moment == .betweenRegisteringAndSynchronizing { try Self.download(into: fixture) }
        store.synchronize()
        if moment == .afterSynchronizing { try Self.download(into: fixture) }
        #expect(received.wait(until: Self.isFirstDownload), "the first download's notice never reached the observer (\(moment.rawValue))")
        PersistentDomain.deliverPendingNotifications()
        #expect(received.count == 1, "posted once, not again when the gate opened")
        #expect(store.string(forKey: "theme") == "dark")
    }

    /// An observer of another object neither hears the store's notice nor
    /// lets it go; `synchronize()` lets it go, so an app whose registration
    /// the simulation cannot see (Foundation's own call, the object typed
    /// `Any`) still hears it once it synchronizes, as Apple's pattern does.
    /// (An observer of every object, `object: nil`, lets every store of the
    /// process go, those made later too: a flag of the whole process, so it is
    /// not set in this test process, whose other tests hold notices.)
    @Test func synchronizeLetsTheHeldNoticeGoAndAnotherObjectsObserverDoesNot() throws {
        let fixture = FaceFixture()
        let store = GroupSim.ubiquitousStore(of: fixture.process(), environment: [GroupSim.keyValueStoreVariable: "com.example.kvs"])
        let elsewhere = NotificationLog()
        let other = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: "someone else", queue: nil
        ) { elsewhere.add($0.userInfo ?? [:]) }
        defer { NotificationCenter.default.removeObserver(other) }
        let received = NotificationLog()
        let unseen = NotificationCenter.default.addObserver(
            forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store as Any?, queue: nil
        ) { received.add($0.userInfo ?? [:]) }
        defer { NotificationCenter.default.removeObserver(unseen) }
        try Self.download(into: fixture)
        #expect(received.count == 0, "held until the app synchronizes")
        store.synchronize()
        #expect(received.wait(until: Self.isFirstDownload))
        #expect(elsewhere.count == 0)
    }
}
