import Foundation
import SharedFiles

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

    public static let defaultDevice = "iPhone"

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
        if let fromEnvironment = environment["GROUPSIM_ROOT"], !fromEnvironment.isEmpty {
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
        if let fromEnvironment = environment["GROUPSIM_DEVICE"], !fromEnvironment.isEmpty {
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

/// Rules for names that become file or folder names.
public enum DomainName {
    public static let global = "NSGlobalDomain"
    public static let argument = "NSArgumentDomain"
    public static let registration = "NSRegistrationDomain"
    public static let languages = "NSLanguagesDomain"
    /// The simulator's name for the managed domain (forced keys and the
    /// managed app configuration), at the top of the search list.
    public static let managed = "NSManagedDomain"

    /// Whether a domain name is an app group's (`group.` prefix).
    /// - Parameter name: The domain name.
    /// - Returns: true for an app group's suite.
    public static func isGroup(_ name: String) -> Bool { name.hasPrefix("group.") }

    /// Refuses names that could escape a folder, are not file names at all,
    /// or would garble the lines that show them.
    /// - Parameters:
    ///   - name: The name to check.
    ///   - what: What the name is, for the error.
    /// - Throws: `DefaultsError.invalidName`, saying what is wrong with it.
    public static func validate(_ name: String, what: String = "domain name") throws {
        let problem: String? =
            if name.isEmpty { "is empty" } else if let unreadable = unreadableCharacter(in: name) { unreadable } else if name.contains("/") {
                "contains '/'"
            } else if name.contains("..") { "contains '..'" } else if name.hasPrefix(".") { "starts with '.'" } else if name.utf8.count > 200 {
                "is longer than 200 bytes"
            } else { nil }
        if let problem { throw DefaultsError.invalidName(name: name, what: what, problem: problem) }
    }

    /// What makes a name unfit to show on one line or to have come from
    /// valid UTF-8: a NUL or another control character, or U+FFFD. nil if none.
    /// Every name is checked for these, suite names too (which may hold '/').
    package static func unreadableCharacter(in name: String) -> String? {
        if name.contains("\0") { return "contains a NUL character" }
        if let (offset, scalar) = name.unicodeScalars.enumerated().first(where: { isControl($0.element) }) {
            return "contains the control character \(codePoint(scalar)) at character \(offset + 1)"
        }
        if let (offset, _) = name.unicodeScalars.enumerated().first(where: { $0.element == "\u{FFFD}" }) {
            return "contains U+FFFD at character \(offset + 1), what bytes that are not UTF-8 are read as (check the name's encoding)"
        }
        return nil
    }

    /// Control characters (C0, DEL, C1) and the Unicode line and paragraph separators.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
