import Foundation
import Guarded
import PropertyList

/// The volatile domains of this process: arguments, registration, languages
/// and named volatile domains. Shared by every `GroupDefaults` instance in
/// the process and seen by no other process (an extension never sees the
/// app's registered defaults).
/// Unchecked Sendable: every domain and the listeners are read and changed under `lock`; `version` is atomic.
public final class ProcessDomains: @unchecked Sendable {
    public static let shared = ProcessDomains()

    private let lock = Locked()
    private var arguments: [String: PlistValue] = [:]
    private var registration: [String: PlistValue] = [:]
    private var languages: [String: PlistValue] = ["AppleLanguages": ["en"], "AppleLocale": "en_US"]
    private var named: [String: [String: PlistValue]] = [:]
    private var listeners = ListenerList()
    /// Moves whenever a domain of the search list (argument, languages, registration) changes.
    let version = ContentVersion()

    /// An empty set of domains (the languages domain holds its defaults); processes use `shared`.
    public init() {}

    /// Fills the argument domain from launch arguments (`-key value`, see
    /// `ArgumentDomain`). Never fails: a value that does not parse is kept as
    /// a string and reported through `Diagnostics`.
    /// - Parameter launchArguments: The process's arguments, without the executable.
    public func setLaunchArguments(_ launchArguments: [String]) {
        let parsed = ArgumentDomain.parse(launchArguments)
        update(DomainName.argument) { $0 = parsed }
    }

    /// `register(defaults:)`: calls combine, later values win.
    /// - Parameter defaults: Keys and values to merge into the registration domain.
    public func register(_ defaults: [String: PlistValue]) {
        update(DomainName.registration) { $0.merge(defaults) { _, new in new } }
    }

    /// A volatile domain's contents (argument, registration, languages, or one set by `setVolatileDomain(_:named:)`); empty when unknown.
    /// - Parameter name: The domain's name.
    /// - Returns: Its keys and values.
    public func volatileDomain(named name: String) -> [String: PlistValue] {
        lock.withLock {
            switch name {
            case DomainName.argument: arguments
            case DomainName.registration: registration
            case DomainName.languages: languages
            default: named[name] ?? [:]
            }
        }
    }

    /// The search list's volatile domains, read together, with the version they are at.
    func searchListLayers() -> (argument: [String: PlistValue], languages: [String: PlistValue], registration: [String: PlistValue], version: UInt64)
    {
        lock.withLock { (arguments, languages, registration, version.current) }
    }

    /// Replaces a volatile domain of this process.
    /// - Parameters:
    ///   - contents: The domain's keys and values.
    ///   - name: The domain's name.
    public func setVolatileDomain(_ contents: [String: PlistValue], named name: String) {
        update(name) { $0 = contents }
    }

    /// Empties a volatile domain and forgets its name.
    /// - Parameter name: The domain's name.
    public func removeVolatileDomain(named name: String) {
        update(name) { $0 = [:] }
        lock.withLock { _ = named.removeValue(forKey: name) }
    }

    public var volatileDomainNames: [String] {
        lock.withLock { [DomainName.argument, DomainName.registration, DomainName.languages] + named.keys.sorted() }
    }

    /// `inline`: changes on the changing thread, before the call that made
    /// them returns; otherwise on the notification queue (see `ListenerList`).
    @discardableResult
    package func addListener(inline: Bool = false, _ listener: @escaping @Sendable (DomainChange) -> Void) -> Int {
        lock.withLock { listeners.add(inline: inline, listener) }
    }

    package func removeListener(_ id: Int) {
        lock.withLock { listeners.remove(id) }
    }

    private func update(_ name: String, _ body: (inout [String: PlistValue]) -> Void) {
        let inline = lock.withLock { updateLocked(name, body) }
        inline.run()
    }

    private func updateLocked(_ name: String, _ body: (inout [String: PlistValue]) -> Void) -> InlineDelivery {
        var contents: [String: PlistValue]
        switch name {
        case DomainName.argument: contents = arguments
        case DomainName.registration: contents = registration
        case DomainName.languages: contents = languages
        default: contents = named[name] ?? [:]
        }
        let old = contents
        body(&contents)
        switch name {
        case DomainName.argument: arguments = contents
        case DomainName.registration: registration = contents
        case DomainName.languages: languages = contents
        default: named[name] = contents
        }
        let changes = differences(from: old, to: contents)
        guard !changes.isEmpty else { return InlineDelivery() }
        version.bump()
        return listeners.deliver(DomainChange(domain: name, changes: changes, origin: .thisProcess))
    }
}
