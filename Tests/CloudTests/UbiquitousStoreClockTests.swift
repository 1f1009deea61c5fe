import CloudDevice
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// A device's clock, as an app process's writes are stamped with it.
@Suite struct UbiquitousStoreClockTests {
    let folder = TemporaryRoot()

    @Test func aClockSetAMomentAgoStampsTheVeryNextWrite() throws {
        let cloud = DeviceCloud(root: SimulationRoot(path: folder.path), device: "iPhone")
        try cloud.updateSettings { $0.account = "alice" }
        let store = try UbiquitousStore(cloud: cloud, identifier: "com.example.notes")
        // Written straight to the file, as another process (`groupsim cloud
        // network skew`, the runner's clock-skew step) writes it: this
        // process's cached view of the settings learns of it through inotify,
        // which a loaded machine may not have delivered yet; the file decides.
        try cloud.updateSettings { $0.clockSkewMilliseconds = 3_600_000 }
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        try store.set(.string("fast"), forKey: "theme")
        try store.flush()
        let stamp = try #require(try cloud.readStore("com.example.notes")?.stamps["theme"])
        #expect(stamp.time >= before + 3_000_000, "stamped \(stamp.time - before) ms from the real time, not with the hour-fast clock")
    }
}
