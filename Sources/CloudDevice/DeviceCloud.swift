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

    /// The device's settings file, opened and watched in this process. A
    /// file holding an impossible number reads as corrupt (and is kept aside
    /// by the next write), as for `storeDomain`.
    package func settingsDomain() throws -> PersistentDomain {
        try DomainRegistry.shared.domain(named: "cloud settings of \(device)", at: settingsPath(), root: root.path, contentCheck: Self.settingsCheck)
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

    static let settingsCheck: SharedPlistFile.ContentCheck = { DeviceCloudSettings.impossibleNumber(in: $0) }
    static let storeCheck: SharedPlistFile.ContentCheck = { StoreCopy.impossibleNumber(in: $0) }

    /// The settings as they are on disk now (defaults when there is no file).
    package func readSettings() throws -> DeviceCloudSettings {
        let path = try settingsPath()
        return try DeviceCloudSettings(SharedPlistFile.read(path: path, root: root.path, contentCheck: Self.settingsCheck) ?? [:], path: path)
    }

    /// Changes the settings atomically (what `groupsim cloud account` and `network` do).
    @discardableResult
    package func updateSettings(_ change: (inout DeviceCloudSettings) throws -> Void) throws -> DeviceCloudSettings {
        let path = try settingsPath()
        var result = DeviceCloudSettings()
        // A device that has cloud settings can be signed in, so it needs its secret from now on.
        _ = try secretFile().readOrCreate()
        try SharedPlistFile(path: path, root: root.path, contentCheck: Self.settingsCheck).update { fields in
            var settings = try DeviceCloudSettings(fields, path: path)
            try change(&settings)
            fields = settings.plist
            result = settings
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
    /// with more is damaged, and a stamp made with it could overflow.
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

    /// Why the fields hold a number no device has (nil: they do not).
    package static func impossibleNumber(in fields: [String: PlistValue]) -> String? {
        if case .integer(let interval)? = fields["uploadIntervalMilliseconds"], !NetworkAction.uploadIntervalRange.contains(interval) {
            return "uploadIntervalMilliseconds is \(interval); it is from 0 to \(NetworkAction.uploadIntervalRange.upperBound) ms"
        }
        guard case .integer(let skew)? = fields["clockSkewMilliseconds"],
            !(-maximumClockSkewMilliseconds...maximumClockSkewMilliseconds).contains(skew)
        else { return nil }
        return "clockSkewMilliseconds is \(skew); a clock is at most ±\(maximumClockSkewMilliseconds) ms (ten years) off"
    }

    package init(_ fields: [String: PlistValue], path: String) throws(CloudFormatError) {
        if let problem = Self.impossibleNumber(in: fields) { throw CloudFormatError("\(path): \(problem)") }
        if let account = fields["account"] {
            guard case .string(let name) = account, !name.isEmpty else { throw CloudFormatError("\(path): account must be a non-empty string") }
            self.account = name
        }
        online = try fields.bool("online", at: path, default: true)
        clockSkewMilliseconds = fields["clockSkewMilliseconds"] == nil ? 0 : try fields.integer("clockSkewMilliseconds", at: path)
        if fields["uploadIntervalMilliseconds"] != nil { uploadIntervalMilliseconds = try fields.integer("uploadIntervalMilliseconds", at: path) }
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
