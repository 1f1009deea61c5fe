import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// A value over Apple's limits stays in the device's copy, however large:
/// the copy is bound by the disk, not by a suite file's limits.
@Suite struct UbiquitousStoreSizeTests {
    let folder = TemporaryRoot()

    /// More values than a suite file may hold (`PlistLimits.maximumValueCount`),
    /// in one value: the copy is written, and read again, whole.
    @Test func aValueOfMillionsOfElementsStaysReadable() throws {
        let cloud = DeviceCloud(root: SimulationRoot(path: folder.path), device: "iPhone")
        try cloud.updateSettings { $0.account = "alice" }
        let store = try UbiquitousStore(cloud: cloud, identifier: "com.example.notes")
        let many = PlistValue.array(Array(repeating: .bool(true), count: PlistLimits.maximumValueCount + 1))
        try store.set(many, forKey: "many")
        try store.flush()
        let copy = try #require(try cloud.readStore("com.example.notes"))
        #expect(copy.values["many"] == many && copy.pending["many"]?.overQuota == true)
        #expect(copy.notices.map(\.change) == [ExternalChange(reason: .quotaViolationChange, keys: ["many"])])
    }
}
