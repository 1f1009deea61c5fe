import Foundation
import PropertyList
import SharedFiles

/// What an administrator (MDM) fixes for an app on a device: forced keys,
/// and the managed app configuration under `configurationKey`. One file per
/// app and device (`SimulationRoot.managedPreferencesPath`), at the top of
/// each of the app's search lists; apps only read it, `groupsim device
/// managed` and the scenario step `managed` write it.
package enum ManagedPreferences {
    /// Where MDM puts an app's managed configuration (a dictionary), as
    /// `UserDefaults.standard.dictionary(forKey:)` reads it on iOS.
    package static let configurationKey = ManagedChange.configurationKey

    /// Why contents cannot be a managed file (nil: they can): the managed
    /// configuration, when present, must be a dictionary.
    package static let check: SharedPlistFile.ContentCheck = { contents in
        guard let configuration = contents[configurationKey] else { return nil }
        if case .dictionary = configuration { return nil }
        return "its \(configurationKey) is \(configuration.typeNameWithArticle), not a dictionary (the managed app configuration is a dictionary)"
    }

    /// The managed file of `domain` (the app's bundle id) on a device, for tools that write it.
    package static func file(root: SimulationRoot, device: String, domain: String) throws -> SharedPlistFile {
        try SharedPlistFile(
            path: try root.managedPreferencesPath(device: device, domain: domain), durable: try root.durability().waitsForTheDisk, root: root.path,
            contentCheck: check)
    }

    /// Its contents; nil if there is none. Strict: a corrupt file, or one
    /// that is not a managed file, is an error naming it. Creates nothing.
    package static func read(root: SimulationRoot, device: String, domain: String) throws -> [String: PlistValue]? {
        try SharedPlistFile.read(path: try root.managedPreferencesPath(device: device, domain: domain), root: root.path, contentCheck: check)
    }

    /// An atomic change of the managed file, as an administrator's push. A
    /// corrupt file is moved aside (and reported), never overwritten; a
    /// change that would make the configuration something else than a dictionary is refused.
    @discardableResult
    package static func update(
        root: SimulationRoot, device: String, domain: String, _ body: (inout [String: PlistValue]) throws -> Void
    ) throws -> SharedPlistFile.Update {
        let file = try file(root: root, device: device, domain: domain)
        let update = try file.update { contents in
            try body(&contents)
            if let problem = check(contents) { throw DefaultsError.invalidManagedValue(path: file.path, reason: problem) }
        }
        if let report = Diagnostic.movedAside(update, path: file.path, domain: "managed preferences of \(domain)") {
            Diagnostics.report(report)
        }
        return update
    }
}
