import CloudDevice
import CloudModel
import Foundation
import PropertyList

/// A device's cloud files (a store's copy, `device.plist`): property lists
/// any process or tool may have written. Each must load or be refused with
/// a `CloudFormatError`; a copy that loads must take writes, records and
/// notices without overflowing, and survive its own file.
enum CloudFileFuzzTargets {
    static func cloudFile(_ data: Data) {
        guard let fields = try? PropertyListFormat.decodeDictionary(data) else { return }
        if var copy = try? StoreCopy(fields, path: "copy.plist") {
            require(StoreCopy.impossibleNumber(in: fields) == nil, "a copy with an impossible number loaded")
            copy.write(.integer(1), forKey: "k", device: "iPhone", time: .max)
            let record = CloudRecord(key: "j", value: nil, stamp: ChangeStamp(time: .min, device: "iPad", sequence: .max), revision: .max)
            copy.apply([record], revision: CloudLimits.maximumCounter, initial: true)
            copy.correct([record])
            require((try? StoreCopy(copy.plist, path: "copy.plist")) == copy, "a copy changed through its own file")
        }
        if let settings = try? DeviceCloudSettings(fields, path: "device.plist") {
            // A number no device has is ignored (and said), never used.
            let limit = DeviceCloudSettings.maximumClockSkewMilliseconds
            require((-limit...limit).contains(settings.clockSkewMilliseconds), "settings with an impossible clock skew loaded")
            require(NetworkAction.uploadIntervalRange.contains(settings.uploadIntervalMilliseconds), "settings with an impossible interval loaded")
            require(
                !DeviceCloudSettings.realTime().addingReportingOverflow(settings.clockSkewMilliseconds).overflow, "the clock skew overflows a stamp")
            // What a writer writes back reads as the same settings, with nothing left to say.
            var again = try? DeviceCloudSettings(settings.plist, path: "device.plist")
            require(again?.problems == [], "settings written back still hold a number no device has")
            again?.problems = settings.problems
            require(again == settings, "settings changed through their own file")
        }
    }
}
