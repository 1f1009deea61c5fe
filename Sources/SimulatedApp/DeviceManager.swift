import Foundation
import GroupDefaults
import PropertyList
import SharedFiles

/// Simulated devices and the apps installed on them, as `simctl` manages
/// simulators: create, list, erase, delete; install an app's manifest.
public struct DeviceManager: Sendable {
    public let root: SimulationRoot

    public init(root: SimulationRoot) { self.root = root }

    public struct Device: Sendable {
        public let name: String
        public let created: Date?
        public let apps: [String]
        public let groups: [String]
    }

    private func metadataPath(_ device: String) throws -> String { try root.devicePath(device) + "/device.plist" }
    private func installedPath(_ device: String) throws -> String { try root.devicePath(device) + "/Library/Installed" }

    public func create(_ name: String) throws {
        let path = try metadataPath(name)
        if FileManager.default.fileExists(atPath: path) { throw AppCommandError("device \(name) already exists") }
        try root.prepareConfinedDirectory(try root.devicePath(name))
        try SharedPlistFile(path: path, root: root.path).update { $0 = ["name": .string(name), "created": .date(Date())] }
    }

    /// Every device folder in the root (made by `create`, or by first use).
    public func list() throws -> [Device] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.devicesPath)) ?? []
        return try names.sorted().filter { !$0.hasPrefix(".") }.map { name in
            let device = try root.devicePath(name)
            let metadata = ((try? SharedPlistFile.read(path: device + "/device.plist")) ?? nil) ?? [:]
            let apps = (try? FileManager.default.contentsOfDirectory(atPath: device + "/Containers/Data/Application")) ?? []
            let groups = (try? FileManager.default.contentsOfDirectory(atPath: device + "/Containers/Shared/AppGroup")) ?? []
            return Device(name: name, created: metadata["created"]?.dateValue, apps: apps.sorted(), groups: groups.sorted())
        }
    }

    private func requireDevice(_ name: String) throws -> String {
        let device = try root.devicePath(name)
        guard FileManager.default.fileExists(atPath: device) else {
            throw AppCommandError("no device named \(name) in \(root.path) (groupsim device list shows them)")
        }
        return device
    }

    /// Erases content and settings: every container and preference goes,
    /// the device itself stays (as `simctl erase`). Running processes notice.
    public func erase(_ name: String) throws {
        let device = try requireDevice(name)
        for entry in try FileManager.default.contentsOfDirectory(atPath: device) where entry != "device.plist" {
            try FileManager.default.removeItem(atPath: device + "/" + entry)
        }
    }

    public func delete(_ name: String) throws {
        try FileManager.default.removeItem(atPath: try requireDevice(name))
    }

    /// Installs an app: creates every target's container and every entitled
    /// group's container, and keeps the manifest for `app list`.
    public func install(_ manifest: AppManifest, manifestText: String, device: String) throws {
        for target in manifest.targets.values {
            try root.prepareConfinedDirectory(try root.appContainerPath(device: device, bundleIdentifier: target.bundleIdentifier) + "/Library/Preferences")
            for group in target.appGroups {
                try root.prepareConfinedDirectory(try root.groupContainerPath(device: device, groupIdentifier: group) + "/Library/Preferences")
            }
        }
        let main = manifest.targets[.mainApp]?.bundleIdentifier ?? manifest.targets.values.first!.bundleIdentifier
        let folder = try installedPath(device)
        try root.prepareConfinedDirectory(folder)
        let file = folder + "/\(main).yaml"
        try Data(manifestText.utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }

    /// The manifests installed on a device, by main bundle id.
    public func installed(device: String) throws -> [(bundle: String, manifest: AppManifest)] {
        let folder = try installedPath(device)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return try files.filter { $0.hasSuffix(".yaml") }.sorted().map { file in
            (String(file.dropLast(5)), try AppManifest.load(folder + "/" + file))
        }
    }

    /// Removes an installed app's containers (its groups' containers stay, as
    /// they may be shared with other apps of the group).
    public func uninstall(bundle: String, device: String) throws {
        guard let entry = try installed(device: device).first(where: { $0.bundle == bundle }) else {
            throw AppCommandError("\(bundle) is not installed on \(device)")
        }
        for target in entry.manifest.targets.values {
            let container = try root.appContainerPath(device: device, bundleIdentifier: target.bundleIdentifier)
            if FileManager.default.fileExists(atPath: container) { try FileManager.default.removeItem(atPath: container) }
        }
        try FileManager.default.removeItem(atPath: try installedPath(device) + "/\(bundle).yaml")
    }
}
