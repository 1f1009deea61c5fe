import CloudModel
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles

/// Where one device keeps its side of the iCloud key-value store, under
/// `devices/<device>/cloud/`: its settings (`device.plist`) and a copy of
/// each store its apps use (`stores/<identifier>.plist`). The device's apps
/// and its sync agent open the same files; docs/layout.md shows them.
package struct DeviceCloud: Sendable {
    package let root: SimulationRoot
    package let device: String

    package init(root: SimulationRoot, device: String) {
        self.root = root
        self.device = device
    }

    package func folder() throws -> String { try root.devicePath(device) + "/cloud" }

    func settingsPath() throws -> String { try folder() + "/device.plist" }

    /// The device's secret (`device.secret`, mode 0600), which its agent shows
    /// the cloud on every connection; made with the device's cloud settings.
    package func secretFile() throws -> SecretFile {
        SecretFile(folder: try root.confinedFolder(folder()), name: "device.secret")
    }

    package func storePath(_ identifier: String) throws -> String {
        try DomainName.validate(identifier, what: "iCloud key-value store identifier")
        return try folder() + "/stores/" + DomainName.fileStem(for: identifier) + ".plist"
    }

    /// The device's settings file, opened and watched in this process. It is
    /// never moved aside for holding what this version cannot read: it holds
    /// the account, and a device whose account read as none would sign out
    /// and drop what it holds (`DeviceCloudSettings.problems`, `updateSettings`).
    package func settingsDomain() throws -> PersistentDomain {
        try DomainRegistry.shared.domain(named: "cloud settings of \(device)", at: settingsPath(), root: root.path)
    }

    /// The largest store copy read or written: no bound but the device's
    /// disk (and memory). A value over Apple's limits stays on the device
    /// whatever its size (docs/cloud.md), so a copy may be far larger than a
    /// suite's `PlistLimits.maximumFileSize`; half of `Int.max` leaves the
    /// readers' arithmetic room.
    static let maximumStoreFileSize = Int.max / 2

    /// A store's copy on this device, opened and watched in this process. A
    /// copy holding a counter no device reaches reads as corrupt: empty,
    /// kept aside by the next write, and filled again from the cloud.
    package func storeDomain(_ identifier: String) throws -> PersistentDomain {
        try DomainRegistry.shared.domain(
            named: "cloud store \(identifier) on \(device)", at: storePath(identifier), root: root.path,
            maximumSize: Self.maximumStoreFileSize, contentCheck: Self.storeCheck)
    }

    static let storeCheck: SharedPlistFile.ContentCheck = { StoreCopy.impossibleNumber(in: $0) }

    /// The settings as they are on disk now (defaults when there is no file).
    package func readSettings() throws -> DeviceCloudSettings {
        let path = try settingsPath()
        return try DeviceCloudSettings(SharedPlistFile.read(path: path, root: root.path) ?? [:], path: path)
    }

    /// Changes the settings atomically (what `groupsim cloud account` and
    /// `network` do, and an app opening a store). A file that cannot be read
    /// is refused, not replaced (it holds the account): the error names it
    /// and says to fix or remove it. `makingSecret`: a device that has cloud
    /// settings can be signed in, so it needs its secret from now on.
    @discardableResult
    package func updateSettings(makingSecret: Bool = true, _ change: (inout DeviceCloudSettings) throws -> Void) throws -> DeviceCloudSettings {
        let path = try settingsPath()
        var result = DeviceCloudSettings()
        if makingSecret { _ = try secretFile().readOrCreate() }
        let file = try SharedPlistFile(path: path, root: root.path, keepsCorruptFile: true)
        do {
            try file.update { fields in
                var settings = try DeviceCloudSettings(fields, path: path)
                try change(&settings)
                fields = settings.plist
                result = settings
            }
        } catch SharedFileError.corrupt(_, let reason) {
            throw CloudFormatError(
                "\(path) cannot be read (\(reason)); it holds the device's account, so it is left as it is: "
                    + "fix it, or remove it to sign the device out (its iCloud copies then leave the device)")
        }
        return result
    }

    /// The copy of a store as it is on disk now (nil if this device has none).
    package func readStore(_ identifier: String) throws -> StoreCopy? {
        let path = try storePath(identifier)
        guard
            let fields = try SharedPlistFile.read(
                path: path, root: root.path, maximumSize: Self.maximumStoreFileSize, contentCheck: Self.storeCheck)
        else { return nil }
        return try StoreCopy(fields, path: path)
    }
}

/// A device's cloud settings: who is signed in, whether it is online, how
/// far its clock is off, and which stores its apps have opened.
package struct DeviceCloudSettings: Sendable, Equatable {
    /// The iCloud account signed in on the device (nil: none).
    package var account: String?
    /// False: the device has no network; its agent stays disconnected.
    package var online = true
    /// Added to the real time for every timestamp this device's apps take.
    package var clockSkewMilliseconds: Int64 = 0
    /// How far a clock may be off, either way: ten years, in milliseconds
    /// (NetworkAction's rule, shared with the CLI and scenarios). A file
    /// with more has it ignored (`problems`): a stamp made with it could overflow.
    package static let maximumClockSkewMilliseconds: Int64 = NetworkAction.skewRange.upperBound
    /// Stores opened by an app on the device; the agent syncs these.
    package var stores: [String] = []
    /// A cloud on another host (`groupsim cloud server`); nil: the root's own
    /// cloud, found through `<root>/cloud/server.plist`.
    package var server: CloudAddress?
    /// The agent uploads each store's writes at most once per this many
    /// milliseconds, the latest value of each key changed since the last
    /// upload (iCloud's "several per minute"); 0, the default: as soon as it sees them.
    package var uploadIntervalMilliseconds: Int64 = 0
    /// True: a write made before a store's first download is uploaded like
    /// any other (no device does this; a scenario's switch to show the rule).
    /// False, the default: it waits for the download, and a key the download
    /// carries takes the cloud's value (`StoreCopy+FirstDownload.swift`).
    package var keepsWritesBeforeFirstDownload = false

    package init() {}

    /// What in the file could not be used, each naming the file, the field
    /// and the value, and what is used instead (a number no device has is
    /// ignored, not taken as a reason to drop the file: the file also holds
    /// the account, and a device that lost it would sign out and drop the
    /// writes it made offline). Not written back: a writer writes the settings in use.
    package var problems: [String] = []

    /// Reads settings from the file's dictionary. A number out of range is
    /// ignored and said in `problems`; a field of the wrong kind throws, so
    /// whoever reads stops rather than act on settings it cannot read.
    package init(_ fields: [String: PlistValue], path: String) throws(CloudFormatError) {
        if let account = fields["account"] {
            guard case .string(let name) = account, !name.isEmpty else { throw CloudFormatError("\(path): account must be a non-empty string") }
            self.account = name
        }
        if fields["clockSkewMilliseconds"] != nil {
            let skew = try fields.integer("clockSkewMilliseconds", at: path)
            if (-Self.maximumClockSkewMilliseconds...Self.maximumClockSkewMilliseconds).contains(skew) {
                clockSkewMilliseconds = skew
            } else {
                problems.append(
                    "\(path): clockSkewMilliseconds is \(skew), but a clock is at most ±\(Self.maximumClockSkewMilliseconds) ms (ten years) off; "
                        + "the device's clock is taken as not skewed until the field is set again (groupsim cloud network --device D skew MS)")
            }
        }
        if fields["uploadIntervalMilliseconds"] != nil {
            let interval = try fields.integer("uploadIntervalMilliseconds", at: path)
            if NetworkAction.uploadIntervalRange.contains(interval) {
                uploadIntervalMilliseconds = interval
            } else {
                problems.append(
                    "\(path): uploadIntervalMilliseconds is \(interval), but it is from 0 to \(NetworkAction.uploadIntervalRange.upperBound) ms; "
                        + "the device uploads without waiting until the field is set again (groupsim cloud network --device D upload-interval MS)")
            }
        }
        online = try fields.bool("online", at: path, default: true)
        keepsWritesBeforeFirstDownload = try fields.bool("keepsWritesBeforeFirstDownload", at: path, default: false)
        stores = try fields.array("stores", at: path).map { item throws(CloudFormatError) in
            guard case .string(let name) = item else { throw CloudFormatError("\(path): stores holds store identifiers (strings)") }
            return name
        }
        if let server = fields["server"] {
            guard case .string(let url) = server else { throw CloudFormatError("\(path): server must be a URL (a string)") }
            do { self.server = try CloudAddress(url: url) } catch { throw CloudFormatError("\(path): server: \(error)") }
        }
    }

    package var plist: [String: PlistValue] {
        var fields: [String: PlistValue] = [
            "online": .bool(online), "clockSkewMilliseconds": .integer(clockSkewMilliseconds),
            "stores": .array(stores.map { .string($0) }),
        ]
        if let account { fields["account"] = .string(account) }
        if let server { fields["server"] = .string(server.url) }
        if uploadIntervalMilliseconds != 0 { fields["uploadIntervalMilliseconds"] = .integer(uploadIntervalMilliseconds) }
        if keepsWritesBeforeFirstDownload { fields["keepsWritesBeforeFirstDownload"] = .bool(true) }
        return fields
    }

    /// The real time, in milliseconds since 1970 (a device's clock adds `clockSkewMilliseconds`).
    package static func realTime() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
