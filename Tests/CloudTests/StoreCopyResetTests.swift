import CloudModel
import Foundation
import PropertyList
import Testing

@testable import CloudDevice

/// A device's copy when the cloud lost the history it followed: it takes
/// the cloud's whole store and gives back what the cloud lacks, with the
/// stamps it holds; and two writes with one stamp end the same on every copy.
@Suite struct StoreCopyResetTests {
    static func record(_ key: String, _ value: PlistValue?, time: Int64, device: String = "iPad", sequence: Int64 = 1, revision: Int64 = 1)
        -> CloudRecord
    {
        StoreCopyTests.record(key, value, time: time, device: device, sequence: sequence, revision: revision)
    }

    @Test func aResetTakesTheCloudsStoreAndGivesBackWhatItLacks() throws {
        var copy = StoreCopyTests.signedIn()
        copy.apply(
            [
                Self.record("a", "old", time: 10), Self.record("b", "from iPad", time: 11, sequence: 2),
                Self.record("c", nil, time: 12, sequence: 3),
            ], revision: 7, initial: true)
        copy.generation = "lost"
        copy.write("pending", forKey: "d", device: "iPhone", time: 13)
        // The cloud (emptied, then written again by another device) has a newer a, and nothing of b, c, d.
        let newer = Self.record("a", "new", time: 20, device: "Mac", revision: 1)
        let reset = copy.reset(to: [newer], revision: 1, generation: "now")
        #expect(reset.changed == ["a"] && reset.givingBack == 2)
        #expect(copy.values == ["a": "new", "b": "from iPad", "d": "pending"])
        #expect(copy.revision == 1 && copy.generation == "now")
        #expect(copy.notices.last?.change == ExternalChange(reason: .serverChange, keys: ["a"]))
        // b and c go back as they were (iPad's stamps, c's removal too); d goes up as a pending write.
        #expect(
            copy.restoreUploads == [
                UploadedChange(key: "b", value: "from iPad", stamp: ChangeStamp(time: 11, device: "iPad", sequence: 2)),
                UploadedChange(key: "c", value: nil, stamp: ChangeStamp(time: 12, device: "iPad", sequence: 3)),
            ])
        #expect(copy.uploads.map(\.key) == ["d"])
        // Survives the file, so an agent killed mid-way gives back the rest.
        let reread = try StoreCopy(copy.plist, path: "copy")
        #expect(reread == copy)
        // The cloud kept b; c lost to a newer write, which the copy shows.
        let winner = Self.record("c", "newest", time: 30, device: "Mac", sequence: 9, revision: 2)
        copy.restored(kept: ["b", "c"], refused: [], superseded: [winner])
        #expect(copy.restoring.isEmpty && copy.values["c"] == "newest")
    }

    @Test func aTieOfStampsIsBrokenByTheValueOnEveryCopy() {
        let apple = Self.record("k", "apple", time: 10)
        let banana = Self.record("k", "banana", time: 10, revision: 2)
        var inOrder = StoreCopyTests.signedIn()
        inOrder.apply([apple], revision: 1, initial: false)
        inOrder.apply([banana], revision: 2, initial: false)
        var reversed = StoreCopyTests.signedIn()
        reversed.apply([banana], revision: 2, initial: false)
        reversed.apply([apple], revision: 3, initial: false)
        #expect(inOrder.values["k"] == "banana" && reversed.values["k"] == "banana")
        #expect(WriteOrder.precedes(apple.stamp, apple.value, banana.stamp, banana.value))
        #expect(WriteOrder.precedes(apple.stamp, nil, apple.stamp, apple.value))
        #expect(!WriteOrder.precedes(apple.stamp, apple.value, apple.stamp, apple.value))
    }
}
