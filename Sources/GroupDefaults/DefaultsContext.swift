import Foundation

/// Who is asking, and so which files a domain name means: the device, the
/// process's bundle identifier and the app groups it is entitled to.
public struct DefaultsContext: Sendable, Hashable {
    public var root: SimulationRoot
    public var device: String
    public var bundleIdentifier: String
    /// The app-group entitlement. nil means unrestricted (the `defaults` tool,
    /// like macOS's, may read any domain).
    public var appGroups: Set<String>?
    /// Whether the device's data protection applies (`ProtectedData`): it does
    /// to the device's processes, not to the tools that look at its files from outside.
    package var isOnDevice = true

    /// - Parameters:
    ///   - root: The simulation root.
    ///   - device: The device.
    ///   - bundleIdentifier: The process's bundle identifier, whose domain is the standard one.
    ///   - appGroups: The app-group entitlement; nil for unrestricted.
    public init(root: SimulationRoot, device: String = SimulationRoot.defaultDevice, bundleIdentifier: String, appGroups: Set<String>? = nil) {
        self.root = root
        self.device = device
        self.bundleIdentifier = bundleIdentifier
        self.appGroups = appGroups
    }

    /// Where a domain lives for this process.
    package struct Location: Sendable, Equatable {
        public enum Kind: String, Sendable { case app, group, global, privateFallback }
        public let domain: String
        public let path: String
        public let kind: Kind
    }

    /// Resolves a domain name to its file, as iOS does for this process:
    /// the global domain, an entitled group's container, or else the app's
    /// own container (where a group suite lands when the entitlement is
    /// missing: the values stay private, which the caller is told about).
    package func locate(_ domain: String) throws -> Location {
        if domain == DomainName.global {
            return Location(domain: domain, path: try root.globalPreferencesPath(device: device), kind: .global)
        }
        // Any name is a domain; its file name is encoded to stay in the folder (DomainFileName.swift).
        let stem = try DomainName.fileStem(for: domain)
        if DomainName.isGroup(domain) {
            if appGroups == nil || appGroups!.contains(domain) {
                let container = try root.groupContainerPath(device: device, groupIdentifier: domain)
                return Location(domain: domain, path: container + "/Library/Preferences/\(stem).plist", kind: .group)
            }
            let container = try root.appContainerPath(device: device, bundleIdentifier: bundleIdentifier)
            return Location(domain: domain, path: container + "/Library/Preferences/\(stem).plist", kind: .privateFallback)
        }
        let container = try root.appContainerPath(device: device, bundleIdentifier: bundleIdentifier)
        return Location(domain: domain, path: container + "/Library/Preferences/\(stem).plist", kind: .app)
    }

    /// Opens the process's shared object for a domain, reporting a missing
    /// entitlement loudly, once per simulated process and suite (not at every open).
    func open(_ domain: String) throws -> PersistentDomain {
        let location = try locate(domain)
        if location.kind == .privateFallback {
            Diagnostics.reportOnce(
                Diagnostic(
                    kind: .missingEntitlement,
                    message:
                        "\(bundleIdentifier) is not entitled to app group \(domain) (missing com.apple.security.application-groups entry \"\(domain)\"): detaching from the shared suite, its values stay in this process's private container '\(location.path)'",
                    path: location.path),
                key: "missing-entitlement \(location.path)")
        }
        // A tool looking at the files from outside is no app of the device: no platform's limits apply to it.
        let onDevice = isOnDevice
        return try DomainRegistry.shared.domain(
            named: domain, at: location.path, root: root.path, unreadable: protectedDataLocked,
            device: { onDevice ? try DeviceSettings.forFile(at: location.path, root: root.path) : nil })
    }

    /// Opens the managed domain of `domain` (the app's own by default): read
    /// only by apps (opening it makes no folder or file), watched like any other. A file whose managed
    /// configuration is not a dictionary reads as corrupt (reported, the last view kept).
    func openManaged(_ domain: String? = nil) throws -> PersistentDomain {
        let path = try root.managedPreferencesPath(device: device, domain: domain ?? bundleIdentifier)
        // One name for every managed file: an instance finds its managed layer's changes by it, whoever opened the file first.
        return try DomainRegistry.shared.domain(
            named: DomainName.managed, at: path, root: root.path,
            contentCheck: ManagedPreferences.check, readOnly: true)
    }
}
