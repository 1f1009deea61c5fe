import Foundation
import SharedFiles
import SimulationValues

/// The folder that holds every simulated device, laid out like iOS:
///
///     <root>/devices/<device>/
///         Library/Preferences/.GlobalPreferences.plist                     NSGlobalDomain
///         Containers/Data/Application/<bundle-id>/Library/Preferences/     an app's own domains
///         Containers/Shared/AppGroup/<group-id>/Library/Preferences/       an app group's suite
///
/// Nothing is ever written outside it.
public struct SimulationRoot: Sendable, Hashable {
    public let path: String

    public static let defaultDevice = SimulationEnvironment.defaultDevice

    /// A root at `path`, standardized (no `..`, no trailing slash); nothing is created.
    /// - Parameter path: The root folder.
    public init(path: String) {
        self.path = (path as NSString).standardizingPath
    }

    /// `--root`, else `$GROUPSIM_ROOT`, else `$XDG_DATA_HOME/groupsim`, else `~/.local/share/groupsim`.
    /// - Parameters:
    ///   - explicit: The `--root` option's value, if given.
    ///   - environment: The variables to read.
    /// - Returns: The root, with its path made absolute.
    public static func resolve(explicit: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) -> SimulationRoot {
        if let explicit, !explicit.isEmpty { return SimulationRoot(path: absolute(explicit)) }
        if let fromEnvironment = environment[ProcessIdentity.Variable.root], !fromEnvironment.isEmpty {
            return SimulationRoot(path: absolute(fromEnvironment))
        }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return SimulationRoot(path: xdg + "/groupsim") }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return SimulationRoot(path: home + "/.local/share/groupsim")
    }

    /// `--device`, else `$GROUPSIM_DEVICE`, else "iPhone". An explicitly empty
    /// `--device` is an error, not the default; an empty variable counts as unset.
    /// - Parameters:
    ///   - explicit: The `--device` option's value, if given.
    ///   - environment: The variables to read.
    /// - Throws: `DefaultsError.invalidName` for an empty `--device` or a name that is no folder name.
    /// - Returns: The device's name.
    public static func resolveDevice(explicit: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let explicit {
            guard !explicit.isEmpty else {
                throw DefaultsError.invalidName(
                    name: explicit, what: "device name",
                    problem: "is empty (--device ''); leave --device out for $GROUPSIM_DEVICE or \(defaultDevice)")
            }
            try DomainName.validate(explicit, what: "device name")
            return explicit
        }
        if let fromEnvironment = environment[ProcessIdentity.Variable.device], !fromEnvironment.isEmpty {
            try DomainName.validate(fromEnvironment, what: "device name")
            return fromEnvironment
        }
        return defaultDevice
    }

    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    public var devicesPath: String { path + "/devices" }

    /// The folder of a device.
    /// - Parameter device: The device's name.
    /// - Throws: `DefaultsError.invalidName` when the name is no folder name.
    /// - Returns: The folder's path.
    public func devicePath(_ device: String) throws -> String {
        try DomainName.validate(device, what: "device name")
        return devicesPath + "/" + device
    }

    /// The global domain's file on a device.
    /// - Parameter device: The device's name.
    /// - Throws: `DefaultsError.invalidName` when the name is no folder name.
    /// - Returns: The file's path.
    public func globalPreferencesPath(device: String) throws -> String {
        try devicePath(device) + "/Library/Preferences/.GlobalPreferences.plist"
    }

    /// An app's data container on a device.
    /// - Parameters:
    ///   - device: The device's name.
    ///   - bundleIdentifier: The app's bundle identifier.
    /// - Throws: `DefaultsError.invalidName` when a name is no folder name.
    /// - Returns: The container's path.
    public func appContainerPath(device: String, bundleIdentifier: String) throws -> String {
        try DomainName.validate(bundleIdentifier, what: "bundle identifier")
        return try devicePath(device) + "/Containers/Data/Application/" + bundleIdentifier
    }

    /// The file of what an administrator (MDM) fixed for `domain` on the device
    /// (`Library/Managed Preferences`, as on macOS): read-only to apps.
    /// - Parameters:
    ///   - device: The device's name.
    ///   - domain: The domain the preferences are for.
    /// - Throws: `DefaultsError.invalidName` when a name cannot be a folder or file name.
    /// - Returns: The file's path.
    public func managedPreferencesPath(device: String, domain: String) throws -> String {
        try devicePath(device) + "/Library/Managed Preferences/" + DomainName.fileStem(for: domain) + ".plist"
    }

    /// An app group's shared container on a device.
    /// - Parameters:
    ///   - device: The device's name.
    ///   - groupIdentifier: The app group's identifier.
    /// - Throws: `DefaultsError.invalidName` when a name is no folder name.
    /// - Returns: The container's path.
    public func groupContainerPath(device: String, groupIdentifier: String) throws -> String {
        try DomainName.validate(groupIdentifier, what: "app group identifier")
        return try devicePath(device) + "/Containers/Shared/AppGroup/" + groupIdentifier
    }

    /// Creates `directory` and every missing folder on the way (0700), walking
    /// down from the root without following a symbolic link (a link is an
    /// error, so nothing is ever created outside the root).
    package func prepareConfinedDirectory(_ directory: String) throws {
        try createDirectories(path)
        _ = try confinedFolder(directory).withDescriptor(creating: true) { _ in }
    }

    /// `directory` as a folder reached from the root one real folder at a time.
    package func confinedFolder(_ directory: String) throws -> ConfinedFolder {
        do {
            return try ConfinedFolder(directory, top: path)
        } catch SharedFileError.outsideTop {
            throw DefaultsError.outsideRoot(path: directory, root: path)
        }
    }
}
