import CloudModel
import PropertyList
import Testing

@testable import CloudDevice

/// What one process posts from its device's copy: every notice in order
/// while it keeps up, and, after missing more than the copy keeps, one
/// coalesced notice per reason naming every key that changed meanwhile.
@Suite struct NoticeCursorTests {
    /// A record of `key` that iPad wrote at `at`, the cloud's revision `at`.
    static func record(_ key: String, _ value: PlistValue?, at: Int64, revision: Int64? = nil) -> CloudRecord {
        StoreCopyTests.record(key, value, time: at, device: "iPad", sequence: at, revision: revision ?? at)
    }

    /// A copy signed in to alice, past its first download of `a`.
    static func synced() -> StoreCopy {
        var copy = StoreCopyTests.signedIn()
        copy.apply([record("a", 1, at: 1)], revision: 1, initial: true)
        return copy
    }

    /// One push per key, each its own notice.
    static func pushes(_ keys: [String], into copy: inout StoreCopy, from revision: Int64 = 2) {
        for (offset, key) in keys.enumerated() {
            let at = revision + Int64(offset)
            copy.apply([record(key, .string(key), at: at)], revision: at, initial: false)
        }
    }

    @Test func aProcessThatKeepsUpPostsEveryNoticeInOrder() {
        var copy = Self.synced()
        var cursor = NoticeCursor(at: copy)
        Self.pushes(["b", "c"], into: &copy)
        copy.write(5, forKey: "mine", device: "iPhone", time: 50)
        #expect(
            cursor.advance(to: copy, device: "iPhone")
                == [ExternalChange(reason: .serverChange, keys: ["b"]), ExternalChange(reason: .serverChange, keys: ["c"])])
        #expect(cursor.advance(to: copy, device: "iPhone").isEmpty)
        Self.pushes(["d"], into: &copy, from: 10)
        #expect(cursor.advance(to: copy, device: "iPhone") == [ExternalChange(reason: .serverChange, keys: ["d"])])
    }

    @Test func aProcessThatMissedNoticesIsToldEveryKeyThatChanged() {
        var copy = Self.synced()
        var cursor = NoticeCursor(at: copy)
        let keys = (0..<(StoreCopy.keptNotices + 8)).map { "k\($0)" }
        Self.pushes(keys, into: &copy)
        #expect(copy.notices.count == StoreCopy.keptNotices)
        // A removal from the cloud is a change too; this device's own writes are not.
        copy.apply([Self.record("a", nil, at: 100)], revision: 100, initial: false)
        copy.write("local", forKey: "mine", device: "iPhone", time: 101)
        #expect(cursor.advance(to: copy, device: "iPhone") == [ExternalChange(reason: .serverChange, keys: (keys + ["a"]).sorted())])
        // Caught up: the next notice comes alone.
        Self.pushes(["later"], into: &copy, from: 200)
        #expect(cursor.advance(to: copy, device: "iPhone") == [ExternalChange(reason: .serverChange, keys: ["later"])])
    }

    @Test func anAccountSwitchMissedIsToldAsOneAndTheFirstDownloadAfterIt() {
        var copy = Self.synced()
        var cursor = NoticeCursor(at: copy)
        Self.pushes((0..<StoreCopy.keptNotices).map { "k\($0)" }, into: &copy)
        copy.switchAccount(to: "bob")
        copy.apply([Self.record("b", 2, at: 300, revision: 1)], revision: 1, initial: true)
        let changes = cursor.advance(to: copy, device: "iPhone")
        #expect(changes.map(\.reason) == [.accountChange, .initialSyncChange])
        // The keys it knew left; those that came and went while it slept it never had.
        #expect(changes.first?.keys == ["a"])
        #expect(changes.last?.keys == ["b"])
    }

    @Test func aFirstDownloadMissedIsStillAnnounced() {
        var copy = StoreCopyTests.signedIn()
        var cursor = NoticeCursor(at: copy)
        Self.pushes((0..<(StoreCopy.keptNotices + 1)).map { "k\($0)" }, into: &copy, from: 1)
        copy.apply([], revision: 100, initial: true)
        // The first download came last here, empty: still the one that tells the first sync is over.
        let changes = cursor.advance(to: copy, device: "iPhone")
        #expect(changes.map(\.reason) == [.initialSyncChange])
    }

    @Test func aQuotaViolationMissedIsAnnounced() {
        var copy = Self.synced()
        var cursor = NoticeCursor(at: copy)
        copy.write(StoreCopyTests.blob(CloudLimits.maximumValueBytes + 1), forKey: "big", device: "iPhone", time: 10)
        Self.pushes((0..<StoreCopy.keptNotices).map { "k\($0)" }, into: &copy)
        let changes = cursor.advance(to: copy, device: "iPhone")
        #expect(changes.map(\.reason) == [.serverChange, .quotaViolationChange])
        #expect(changes.last?.keys == ["big"])
    }

    @Test func aCopyMadeAnewIsComparedNotTrusted() {
        var copy = Self.synced()
        Self.pushes(["b"], into: &copy)
        var cursor = NoticeCursor(at: copy)
        // The device erased: the copy is gone, its serials start again.
        #expect(cursor.advance(to: StoreCopy(), device: "iPhone") == [ExternalChange(reason: .accountChange, keys: ["a", "b"])])
    }

    @Test func serialsFromTheFileCannotOverflowTheComparison() {
        var copy = Self.synced()
        var cursor = NoticeCursor(at: copy)
        copy.notices = [StoreCopy.Notice(serial: .max, change: ExternalChange(reason: .serverChange, keys: ["x"]))]
        #expect(cursor.advance(to: copy, device: "iPhone").isEmpty)  // nothing changed, though a notice seems missed
        copy.notices = [StoreCopy.Notice(serial: .min, change: ExternalChange(reason: .serverChange, keys: ["x"]))]
        #expect(cursor.advance(to: copy, device: "iPhone").isEmpty)
    }
}
