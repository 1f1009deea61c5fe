import Foundation
import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// tvOS's size-limit warning through the Foundation face: posted when a
/// commit of this process takes the domain to 512 KiB, again only after it
/// went below; never on other platforms.
@Suite struct SizeLimitFaceTests {
    let fixture = FaceFixture()

    private func makeDevice(_ platform: DevicePlatform) throws {
        let device = fixture.root.path + "/devices/iPhone"
        try FileManager.default.createDirectory(atPath: device, withIntermediateDirectories: true)
        let metadata = DeviceSettings(platform: platform).metadata
        try Data(PropertyListFormat.binary.encode(.dictionary(metadata))).write(to: URL(fileURLWithPath: device + "/device.plist"))
    }

    /// Counts the notifications posted for `defaults`.
    private final class Posts: @unchecked Sendable {
        private let lock = NSLock()
        private var objects: [ObjectIdentifier?] = []
        func add(_ object: Any?) { lock.withLock { objects.append((object as AnyObject?).map(ObjectIdentifier.init)) } }
        var all: [ObjectIdentifier?] { lock.withLock { objects } }
    }

    /// Only `defaults`' posts: tests run side by side in this process.
    private func observe(_ defaults: SimulatedFoundation.UserDefaults, into posts: Posts) -> NSObjectProtocol {
        NotificationCenter.default.addObserver(forName: UserDefaults.sizeLimitExceededNotification, object: defaults, queue: nil) {
            posts.add($0.object)
        }
    }

    private func poster(_ bytes: Int) -> Data { Data(repeating: 0x2A, count: bytes) }

    @Test func tvOSPostsWhenTheDomainReachesTheWarningSizeAndAgainOnlyAfterItShrank() throws {
        try makeDevice(.tvOS)
        let defaults = try #require(UserDefaults(suiteName: fixture.group, process: fixture.process()))
        let posts = Posts()
        let token = observe(defaults, into: posts)
        defer { NotificationCenter.default.removeObserver(token) }

        defaults.set(poster(300_000), forKey: "artwork")
        #expect(defaults.synchronize())
        PersistentDomain.deliverPendingNotifications()
        #expect(posts.all.isEmpty, "300 KB is under tvOS's warning size")

        defaults.set(poster(300_000), forKey: "posters")
        #expect(defaults.synchronize())
        PersistentDomain.deliverPendingNotifications()
        #expect(posts.all == [ObjectIdentifier(defaults)], "the commit that reached 512 KiB posts, with the instance as object")

        defaults.set("still big", forKey: "title")
        #expect(defaults.synchronize())
        PersistentDomain.deliverPendingNotifications()
        #expect(posts.all.count == 1, "a commit that stays over the size posts no second warning")

        defaults.removeObject(forKey: "posters")
        #expect(defaults.synchronize())
        defaults.set(poster(300_000), forKey: "trailers")
        #expect(defaults.synchronize())
        PersistentDomain.deliverPendingNotifications()
        #expect(posts.all == [ObjectIdentifier(defaults), ObjectIdentifier(defaults)], "reaching it again after shrinking posts again")
    }

    @Test func otherPlatformsNeverPostIt() throws {
        try makeDevice(.iOS)
        let defaults = try #require(UserDefaults(suiteName: fixture.group, process: fixture.process()))
        let posts = Posts()
        let token = observe(defaults, into: posts)
        defer { NotificationCenter.default.removeObserver(token) }
        defaults.set(poster(1_200_000), forKey: "offline")
        #expect(defaults.synchronize())
        PersistentDomain.deliverPendingNotifications()
        #expect(posts.all.isEmpty)
        #expect(defaults.groupDefaults.onSizeLimitWarning {} == nil, "nothing listens where the platform never warns")
    }
}
