import Foundation
import GroupDefaults
import SimulatedFoundation
import TestSupport
import Testing

/// tvOS's size-limit warning through the Foundation face: posted when a
/// commit of this process takes the domain to 512 KiB, again only after it
/// went below; never on other platforms.
@Suite struct SizeLimitFaceTests {
    let fixture = FaceFixture()

    /// The objects of the notifications an observer was given, in order.
    private final class Posts: @unchecked Sendable {
        private let lock = NSLock()
        private var objects: [ObjectIdentifier?] = []
        func add(_ object: Any?) { lock.withLock { objects.append((object as AnyObject?).map(ObjectIdentifier.init)) } }
        var all: [ObjectIdentifier?] { lock.withLock { objects } }
    }

    /// Runs `body` with an instance of the shared group on a device of `platform`, and the size-limit
    /// notifications posted for that instance (only its own: tests run side by side in this process).
    private func withObservedDefaults(on platform: DevicePlatform, _ body: (SimulatedFoundation.UserDefaults, Posts) throws -> Void) throws {
        try fixture.root.makeDevice(DeviceSettings(platform: platform))
        let defaults = try #require(GroupSim.defaults(suiteName: fixture.group, of: fixture.process()))
        let posts = Posts()
        let token = NotificationCenter.default.addObserver(forName: UserDefaults.sizeLimitExceededNotification, object: defaults, queue: nil) {
            posts.add($0.object)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try body(defaults, posts)
    }

    private func poster(_ bytes: Int) -> Data { Data(repeating: 0x2A, count: bytes) }

    /// Sets `value` (nil removes), then waits for the commit and for every notification it queued.
    private func commit(_ defaults: SimulatedFoundation.UserDefaults, _ value: Any?, forKey key: String) {
        defaults.set(value, forKey: key)
        #expect(defaults.synchronize())
        PersistentDomain.deliverPendingNotifications()
    }

    @Test func tvOSPostsWhenTheDomainReachesTheWarningSizeAndAgainOnlyAfterItShrank() throws {
        try withObservedDefaults(on: .tvOS) { defaults, posts in
            commit(defaults, poster(300_000), forKey: "artwork")
            #expect(posts.all.isEmpty, "300 KB is under tvOS's warning size")
            commit(defaults, poster(300_000), forKey: "posters")
            #expect(posts.all == [ObjectIdentifier(defaults)], "the commit that reached 512 KiB posts, for the instance")
            commit(defaults, "still big", forKey: "title")
            #expect(posts.all.count == 1, "a commit that stays over the size posts no second warning")
            commit(defaults, nil, forKey: "posters")
            commit(defaults, poster(300_000), forKey: "trailers")
            #expect(posts.all == [ObjectIdentifier(defaults), ObjectIdentifier(defaults)], "reaching it again after shrinking posts again")
        }
    }

    @Test func otherPlatformsNeverPostIt() throws {
        try withObservedDefaults(on: .iOS) { defaults, posts in
            commit(defaults, poster(1_200_000), forKey: "offline")
            #expect(posts.all.isEmpty)
            #expect(GroupSim.groupDefaults(of: defaults).onSizeLimitWarning {} == nil, "nothing listens where the platform never warns")
        }
    }
}
