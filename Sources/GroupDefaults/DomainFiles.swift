import Foundation
import PropertyList
import SharedFiles

/// Direct access to the domain files of one device, for tools that act
/// once and exit (`groupsim defaults`). Unlike `GroupDefaults`, reads here
/// are strict: a corrupt file is an error, not an empty domain.
package struct DomainFiles: Sendable {
    public let root: SimulationRoot
    public let device: String
    /// The app whose container holds non-group suites (and, for an app not
    /// entitled to a group, its private copy of the group's suite).
    public let app: String?

    public init(root: SimulationRoot, device: String, app: String? = nil) {
        self.root = root
        self.device = device
        self.app = app
    }

    /// The context a domain name is resolved in: the named app, or the
    /// domain's own app container when it is an app's bundle id.
    public func context(for domain: String) -> DefaultsContext {
        let bundle = app ?? (DomainName.isGroup(domain) || domain == DomainName.global ? "groupsim.defaults" : domain)
        var context = DefaultsContext(root: root, device: device, bundleIdentifier: bundle, appGroups: app == nil ? nil : [])
        // A tool (groupsim defaults, the stress tool, the benchmarks) reads the files whatever the device's lock.
        context.isOnDevice = false
        return context
    }

    /// Opens the domain as the app that owns it would (through the process's
    /// shared cache, watched for changes from other processes).
    public func defaults(for domain: String) throws -> GroupDefaults {
        let name = canonical(domain)
        let context = context(for: name)
        // An app's own domain is its standard defaults; NSGlobalDomain is seen
        // through the tool's own (empty) standard domain, whose search list holds it.
        if name == context.bundleIdentifier || name == DomainName.global { return try GroupDefaults(context: context) }
        return try GroupDefaults(suiteName: name, context: context)
    }

    public func location(of domain: String) throws -> DefaultsContext.Location {
        try context(for: domain).locate(canonical(domain))
    }

    /// `-g` and `-globalDomain` mean NSGlobalDomain, as for macOS `defaults`.
    public func canonical(_ domain: String) -> String {
        domain == "-g" || domain == "-globalDomain" ? DomainName.global : domain
    }

    /// The domain's file, opened for writing (its folder is created if missing). On a device that reads
    /// through cfprefsd's cache (macOS), a write goes through cfprefsd as `defaults write` does: it starts
    /// from the store's last commit, not from a file changed beside it (`SharedPlistFile`'s `keepsStoreCopy`).
    public func file(for domain: String) throws -> SharedPlistFile {
        let path = try location(of: domain).path
        return try SharedPlistFile(
            path: path, durable: try root.durability().waitsForTheDisk, root: root.path,
            keepsStoreCopy: try DeviceSettings.forFile(at: path, root: root.path).preferencesCache)
    }

    /// The domain's contents; nil if it has no file. Creates nothing.
    public func read(_ domain: String) throws -> [String: PlistValue]? {
        try SharedPlistFile.read(path: try location(of: domain).path, root: root.path)
    }

    /// Deletes the domain's file; false if it had none. Creates nothing when there is none.
    public func delete(_ domain: String) throws -> Bool {
        guard FileManager.default.fileExists(atPath: try location(of: domain).path) else { return false }
        return try file(for: domain).remove()
    }

    /// An atomic read-modify-write of the domain's file. A corrupt file is
    /// moved aside (and reported) instead of being overwritten.
    @discardableResult
    public func update(_ domain: String, _ body: (inout [String: PlistValue]) throws -> Void) throws -> SharedPlistFile.Update {
        let file = try file(for: domain)
        let update = try file.update(body)
        if let report = Diagnostic.movedAside(update, path: file.path, domain: canonical(domain)) { Diagnostics.report(report) }
        return update
    }

    /// Every domain with a file on the device: apps' own domains, group suites and the global domain.
    public func allDomains() throws -> [String] {
        let device = try root.devicePath(self.device)
        var names = Set<String>()
        let fileManager = FileManager.default
        for kind in ["Containers/Data/Application", "Containers/Shared/AppGroup"] {
            for container in (try? fileManager.contentsOfDirectory(atPath: "\(device)/\(kind)")) ?? [] {
                let preferences = "\(device)/\(kind)/\(container)/Library/Preferences"
                for file in (try? fileManager.contentsOfDirectory(atPath: preferences)) ?? [] where file.hasSuffix(".plist") && !file.hasPrefix(".") {
                    guard let domain = DomainName.domain(fromFileStem: String(file.dropLast(".plist".count))) else { continue }
                    // A group suite inside an app container is a private copy; list it only through --app.
                    if kind.hasSuffix("Application") && DomainName.isGroup(domain) && app != container { continue }
                    if kind.hasSuffix("Application") && domain != container && app != container { continue }
                    names.insert(domain)
                }
            }
        }
        if fileManager.fileExists(atPath: try root.globalPreferencesPath(device: self.device)) { names.insert(DomainName.global) }
        return names.sorted()
    }
}
