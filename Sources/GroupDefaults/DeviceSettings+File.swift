import Foundation
import SharedFiles
import SimulationValues

extension DeviceSettings {
    /// The settings of the device a domain file at `path` belongs to (the
    /// defaults for a file outside `<root>/devices/`, or a device without
    /// metadata). Read at a domain's first opening, never on a read or write.
    package static func forFile(at path: String, root: String) throws -> DeviceSettings {
        let devices = root + "/devices/"
        guard path.hasPrefix(devices), let device = path.dropFirst(devices.count).split(separator: "/").first else { return DeviceSettings() }
        let metadataPath = devices + device + "/device.plist"
        guard let metadata = try SharedPlistFile.read(path: metadataPath, root: root) else { return DeviceSettings() }
        return try DeviceSettings(metadata: metadata, path: metadataPath)
    }
}
