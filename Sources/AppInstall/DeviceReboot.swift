import Foundation
import GroupDefaults

/// A device's reboot and first unlock (`ProtectedData`): the state is kept
/// in its `device.plist`, which every process consults when it opens a domain.
extension DeviceManager {
    /// Reboots a device: until `unlock`, processes launched on it read their preferences as absent.
    package func reboot(_ name: String, protection: ProtectedData.Protection = .untilFirstUnlock) throws {
        try requireExistingDevice(name)
        try ProtectedData.set(root: root, device: name, locked: true, protection: protection)
    }

    /// The person's first unlock after the reboot: processes opening a domain from now on read the files.
    package func unlock(_ name: String) throws {
        try requireExistingDevice(name)
        try ProtectedData.set(root: root, device: name, locked: false)
    }

    /// The device's protected-data state, for `device list`.
    package func protectedDataState(_ name: String) throws -> ProtectedData.State {
        try ProtectedData.state(root: root, device: name)
    }

    /// A device (the default one included) whose folder exists: a reboot of a typo must not make a device.
    private func requireExistingDevice(_ name: String) throws {
        try requireDevice(name)
        try root.prepareConfinedDirectory(try root.devicePath(name))
    }
}
