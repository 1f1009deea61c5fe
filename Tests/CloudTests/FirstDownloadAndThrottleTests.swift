import CloudModel
import Foundation
import PropertyList
import Testing

@testable import CloudDevice
@testable import CloudService

/// Writes made before a store's first download give way to the cloud's
/// values (NSUbiquitousKeyValueStoreInitialSyncChange), and a store's uploads
/// are throttled to one per interval (docs/apple-traps.md).
@Suite struct FirstDownloadAndThrottleTests {
    @Test func aWriteBeforeTheFirstDownloadIsHeldThenOverwrittenAndNamed() {
        var copy = StoreCopyTests.signedIn()
        copy.write("light", forKey: "theme", device: "iPad", time: 500, heldForFirstDownload: true)
        copy.write(1, forKey: "launches", device: "iPad", time: 501, heldForFirstDownload: true)
        #expect(copy.values["theme"] == "light")
        #expect(copy.uploads.isEmpty, "held until the first download")
        let changed = copy.apply([StoreCopyTests.record("theme", "dark", time: 100, device: "iPhone")], revision: 1, initial: true)
        #expect(changed == ["theme"])
        #expect(copy.values["theme"] == "dark", "the cloud's value wins, however old")
        #expect(copy.notices.last?.change == ExternalChange(reason: .initialSyncChange, keys: ["theme"]))
        // A key the cloud lacks keeps the write, which goes up now.
        #expect(copy.uploads.map(\.key) == ["launches"])
        // Written after the download, a key goes up at once.
        copy.write("light", forKey: "theme", device: "iPad", time: 600, heldForFirstDownload: true)
        #expect(copy.uploads.map(\.key).sorted() == ["launches", "theme"])
    }

    @Test func theHeldMarkSurvivesTheFileAndIsOffWhenNotAsked() throws {
        var copy = StoreCopyTests.signedIn()
        copy.write("light", forKey: "theme", device: "iPad", time: 500, heldForFirstDownload: true)
        let read = try StoreCopy(copy.plist, path: "copy.plist")
        #expect(read.pending["theme"]?.beforeFirstDownload == true && read.uploads.isEmpty)
        var kept = StoreCopyTests.signedIn()
        kept.write("light", forKey: "theme", device: "iPad", time: 500)
        #expect(kept.uploads.map(\.key) == ["theme"])
        kept.apply([StoreCopyTests.record("theme", "dark", time: 100, device: "iPhone")], revision: 1, initial: true)
        #expect(kept.values["theme"] == "light", "without the rule the newer write wins")
    }

    @Test func aStoreUploadsAtMostOncePerIntervalAndSaysWhenItHolds() {
        var throttle = UploadThrottle()
        var said: [String] = []
        let start = ContinuousClock.now
        #expect(throttle.hold("s", interval: 1000, changes: 1, now: start) { name, _ in said.append(name) } == nil, "the first goes at once")
        #expect(throttle.sent("s", nextSequence: 2, now: start) == nil)
        let wait = throttle.hold("s", interval: 1000, changes: 3, now: start + .milliseconds(400)) { name, _ in said.append(name) }
        #expect(wait == .milliseconds(600))
        _ = throttle.hold("s", interval: 1000, changes: 3, now: start + .milliseconds(500)) { name, _ in said.append(name) }
        #expect(said == ["throttled"], "a hold is said once")
        #expect(throttle.hold("s", interval: 1000, changes: 3, now: start + .milliseconds(1000)) { _, _ in } == nil)
        #expect(throttle.sent("s", nextSequence: 102, now: start + .milliseconds(1000)) == 100, "the writes the upload carries")
        #expect(throttle.hold("other", interval: 1000, changes: 1, now: start + .milliseconds(1001)) { _, _ in } == nil, "per store")
        #expect(throttle.hold("s", interval: 0, changes: 1, now: start + .milliseconds(1001)) { _, _ in } == nil, "0: at once")
    }

    @Test func theIntervalIsBoundedInTheSettingsFile() throws {
        let over = try DeviceCloudSettings(["uploadIntervalMilliseconds": .integer(600_001), "account": "alice"], path: "device.plist")
        #expect(over.uploadIntervalMilliseconds == 0 && over.account == "alice")
        #expect(
            over.problems == [
                "device.plist: uploadIntervalMilliseconds is 600001, but it is from 0 to 600000 ms; "
                    + "the device uploads without waiting until the field is set again (groupsim cloud network --device D upload-interval MS)"
            ])
        let within = try DeviceCloudSettings(["uploadIntervalMilliseconds": .integer(15_000)], path: "device.plist")
        #expect(within.uploadIntervalMilliseconds == 15_000 && within.problems.isEmpty)
        #expect(throws: CloudFormatError.self) { try NetworkAction("upload-interval", -1) }
        #expect(try NetworkAction("upload-interval", 15_000) == .uploadInterval(milliseconds: 15_000))
    }
}
