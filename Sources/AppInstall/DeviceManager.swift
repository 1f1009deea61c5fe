import AppModel
import CloudDevice
import DeviceState
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import SpecFormat

/// Simulated devices and the apps installed on them, as `simctl` manages
/// simulators: create, list, erase, delete; install an app's manifest.
///
/// Every folder is reached from the root without following a symbolic link,
/// and erasing or deleting removes a link itself, never what it points to:
/// a link in a device cannot make these commands touch anything outside the root.
package struct DeviceManager: Sendable {
    package let root: SimulationRoot

    /// The largest manifest `installed` reads (a manifest is a few hundred bytes).
    static let maximumManifestSize = 1 << 20

    package init(root: SimulationRoot) { self.root = root }

    package struct Device: Sendable {
        package let name: String
        package let created: Date?
        package let apps: [String]
        package let groups: [String]
        /// Set when the entry is not a device folder (a link or a file), which commands refuse.
        package let problem: String?
        /// Its platform and preferences cache (nil with `problem`, or when its metadata cannot be read as settings).
        package var settings: DeviceSettings? = nil
        /// Why its settings (`device.plist`) cannot be read: no app can launch on it until that is fixed.
        package var settingsProblem: String? = nil
    }

    private func metadataPath(_ device: String) throws -> String { try root.devicePath(device) + "/device.plist" }
    private func installedPath(_ device: String) throws -> String { try root.devicePath(device) + "/Library/Installed" }

    package func create(_ name: String, settings: DeviceSettings = DeviceSettings()) throws {
        let path = try metadataPath(name)
        // A device folder made by first use, without metadata yet, may be created (named) now.
        let exists = try root.confinedFolder(root.devicePath(name)).withDescriptor(creating: false) { device -> Bool in
            var info = stat()
            return fstatat(device, "device.plist", &info, AT_SYMLINK_NOFOLLOW) == 0
        }
        if exists == true { throw DeviceError("device \(name) already exists") }
        try root.prepareConfinedDirectory(try root.devicePath(name))
        try SharedPlistFile(path: path, root: root.path).update {
            $0 = ["name": .string(name), "created": .date(Date())].merging(settings.metadata) { _, new in new }
        }
        // Its secret for the cloud is made with it (docs/cloud.md, Security).
        _ = try DeviceCloud(root: root, device: name).secretFile().readOrCreate()
    }

    /// Every device folder in the root (made by `create`, or by first use).
    package func list() throws -> [Device] {
        try root.confinedFolder(root.devicesPath).withDescriptor(creating: false) { devices in
            let names = try FolderTree.entries(of: devices, path: root.devicesPath).map(FolderTree.displayName)
            return try names.sorted().filter { !$0.hasPrefix(".") }.map { name in
                let device = try root.devicePath(name)
                var info = stat()
                guard fstatat(devices, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                    let kind = fstatat(devices, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? describeFileType(info.st_mode) : "gone"
                    return Device(name: name, created: nil, apps: [], groups: [], problem: "\(kind), not a device folder")
                }
                // Read as launching an app reads it: what stops a launch is said here too, not shown as a platform.
                var settings: DeviceSettings? = nil
                var settingsProblem: String? = nil
                var metadata: [String: PlistValue] = [:]
                do {
                    metadata = try SharedPlistFile.read(path: device + "/device.plist", root: root.path) ?? [:]
                    settings = try DeviceSettings(metadata: metadata, path: device + "/device.plist")
                } catch {
                    settingsProblem = "\(error)"
                }
                return Device(
                    name: name, created: metadata["created"]?.dateValue,
                    apps: (try? folderNames(device + "/Containers/Data/Application")) ?? [],
                    groups: (try? folderNames(device + "/Containers/Shared/AppGroup")) ?? [], problem: nil,
                    settings: settings, settingsProblem: settingsProblem)
            }
        } ?? []
    }

    /// The names in a folder under the root, sorted; empty if it does not exist.
    private func folderNames(_ path: String) throws -> [String] {
        try root.confinedFolder(path).withDescriptor(creating: false) { folder in
            try FolderTree.entries(of: folder, path: path).map(FolderTree.displayName).sorted()
        } ?? []
    }

    /// What `devices/<name>` is (its file type), nil if absent; never follows a link.
    private func deviceEntryType(_ name: String) throws -> mode_t? {
        _ = try root.devicePath(name)
        return try root.confinedFolder(root.devicesPath).withDescriptor(creating: false) { devices -> mode_t? in
            var info = stat()
            guard fstatat(devices, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
            return info.st_mode & S_IFMT
        } ?? nil
    }

    private func noDevice(_ name: String) -> DeviceError {
        DeviceError("no device named \(name) in \(root.path) (groupsim device list shows them)")
    }

    /// Erases content and settings: every container and preference goes,
    /// the device itself stays (as `simctl erase`). Running processes notice.
    package func erase(_ name: String) throws {
        let device = try root.devicePath(name)
        switch try deviceEntryType(name) {
        case nil: throw noDevice(name)
        case S_IFDIR?: break
        case let type?:
            throw DeviceError(
                "'\(device)' is \(describeFileType(type)), not a device folder; nothing was erased (groupsim device delete \(name) removes it)")
        }
        // The walk refuses a device swapped for a link since the check.
        guard
            try root.confinedFolder(device).withDescriptor(
                creating: false,
                { folder in
                    try FolderTree.removeContents(of: folder, path: device, keeping: ["device.plist"])
                }) != nil
        else { throw noDevice(name) }
    }

    /// Deletes a device folder with everything in it; a link standing for a device is removed itself.
    package func delete(_ name: String) throws {
        let device = try root.devicePath(name)
        let removed = try root.confinedFolder(root.devicesPath).withDescriptor(creating: false) { devices in
            try FolderTree.remove(name, in: devices, path: device)
        }
        guard removed == true else { throw noDevice(name) }
    }

    /// Installs an app: creates every target's container and every entitled
    /// group's container, and keeps the manifest for `app list`.
    package func install(_ manifest: AppManifest, manifestText: String, device: String) throws {
        for target in manifest.targets.values {
            try root.prepareConfinedDirectory(
                try root.appContainerPath(device: device, bundleIdentifier: target.bundleIdentifier) + "/Library/Preferences")
            for group in target.appGroups {
                try root.prepareConfinedDirectory(try root.groupContainerPath(device: device, groupIdentifier: group) + "/Library/Preferences")
            }
        }
        guard let main = manifest.targets[.mainApp]?.bundleIdentifier ?? manifest.targets.values.first?.bundleIdentifier else {
            throw DeviceError("the manifest of \(manifest.name) has no targets; nothing was installed")
        }
        let folder = try installedPath(device)
        _ = try root.confinedFolder(folder).withDescriptor(creating: true) { descriptor in
            try writeFileAtomically(Data(manifestText.utf8), named: "\(main).yaml", in: descriptor, folderPath: folder)
        }
    }

    /// The manifests installed on a device, by main bundle id.
    package func installed(device: String) throws -> [(bundle: String, manifest: AppManifest)] {
        let folder = try installedPath(device)
        return try root.confinedFolder(folder).withDescriptor(creating: false) { descriptor in
            let files = try FolderTree.entries(of: descriptor, path: folder).map(FolderTree.displayName)
            return try files.filter { $0.hasSuffix(".yaml") && !$0.hasPrefix(".") }.sorted().map { file in
                let path = folder + "/" + file
                // Read as any suite file is: a FIFO or a huge file is refused, not waited on.
                guard let bytes = try readRegularFile(named: file, in: descriptor, path: path, limit: Self.maximumManifestSize) else {
                    throw DeviceError("'\(path)' went away while it was read; run the command again")
                }
                return (String(file.dropLast(5)), try Self.parseManifest(bytes, path: path).manifest)
            }
        } ?? []
    }

    /// Reads and parses a manifest file, refusing (without waiting) a FIFO or
    /// anything but a regular file, and a file larger than any manifest.
    package static func loadManifest(_ path: String) throws -> (text: String, manifest: AppManifest) {
        guard let bytes = try readWholeFile(path, limit: maximumManifestSize) else {
            throw DeviceError("no manifest at '\(path)'")
        }
        return try parseManifest(bytes, path: path)
    }

    private static func parseManifest(_ bytes: [UInt8], path: String) throws -> (text: String, manifest: AppManifest) {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw DeviceError("'\(path)' is not UTF-8 text; save the manifest as UTF-8")
        }
        return (text, try AppManifest.parse(SpecNode.parse(text, file: path)))
    }

    /// Removes an installed app's containers (its groups' containers stay, as
    /// they may be shared with other apps of the group).
    package func uninstall(bundle: String, device: String) throws {
        guard let entry = try installed(device: device).first(where: { $0.bundle == bundle }) else {
            throw DeviceError("\(bundle) is not installed on \(device)")
        }
        for target in entry.manifest.targets.values {
            let container = try root.appContainerPath(device: device, bundleIdentifier: target.bundleIdentifier)
            let containers = (container as NSString).deletingLastPathComponent
            _ = try root.confinedFolder(containers).withDescriptor(creating: false) { folder in
                try FolderTree.remove(target.bundleIdentifier, in: folder, path: container)
            }
        }
        let folder = try installedPath(device)
        _ = try root.confinedFolder(folder).withDescriptor(creating: false) { descriptor in
            try FolderTree.remove("\(bundle).yaml", in: descriptor, path: folder + "/\(bundle).yaml")
        }
        // An app group's container goes with the last installed app entitled to it, as on iOS.
        let groups = Set(entry.manifest.targets.values.flatMap(\.appGroups))
        let stillUsed = Set(try installed(device: device).flatMap { $0.manifest.targets.values.flatMap(\.appGroups) })
        for group in groups.subtracting(stillUsed).sorted() {
            let container = try root.groupContainerPath(device: device, groupIdentifier: group)
            let containers = (container as NSString).deletingLastPathComponent
            _ = try root.confinedFolder(containers).withDescriptor(creating: false) { folder in
                try FolderTree.remove(group, in: folder, path: container)
            }
        }
    }
}

/// A device or app management request that cannot be done (no such device, not a folder …).
extension DeviceManager {
    /// Refuses a device that does not exist, as `simctl` does, naming the
    /// likely one meant: a typo must not make a device. The default device
    /// (`iPhone`) is the exception, made by the first write to a new root.
    package func requireDevice(_ name: String) throws {
        if name == SimulationRoot.defaultDevice { return }
        let path = try root.devicePath(name)
        if FileManager.default.fileExists(atPath: path) { return }
        let known = (try? list().map(\.name)) ?? []
        var message = "no device named \(name) in \(root.path)"
        if let guess = NameSuggestion.closest(to: name, among: known) { message += "; did you mean \(guess)?" }
        message += known.isEmpty ? "; there are no devices yet" : " (devices: \(known.joined(separator: ", ")))"
        throw DeviceError(message + "; to make it: groupsim device create \(name)")
    }
}

/// A device's platform and preferences cache (docs/apple-traps.md).
extension DeviceManager {
    /// The device's settings (an iOS device's for one made by first use).
    package func settings(of name: String) throws -> DeviceSettings {
        try requireDevice(name)
        let path = try metadataPath(name)
        return try DeviceSettings(metadata: (try SharedPlistFile.read(path: path, root: root.path)) ?? [:], path: path)
    }

    /// Changes a device's settings; processes started afterwards use them (running ones keep theirs).
    /// `preferencesCache` nil with a new platform: the new platform's default.
    @discardableResult
    package func changeSettings(of name: String, platform: DevicePlatform?, preferencesCache: Bool?) throws -> DeviceSettings {
        let current = try settings(of: name)
        let changed = DeviceSettings(
            platform: platform ?? current.platform,
            preferencesCache: preferencesCache ?? (platform == nil ? current.preferencesCache : nil))
        try SharedPlistFile(path: try metadataPath(name), root: root.path).update {
            if $0["name"] == nil { $0["name"] = .string(name) }
            $0.merge(changed.metadata) { _, new in new }
        }
        return changed
    }
}
