import Foundation
import Guarded
import PropertyList
import SharedFiles
// The value types of the defaults API that live below the disk (DefaultsError, DomainName, Durability …), so that a
// module using GroupDefaults sees them as before.
@_exported import SimulationValues
import Synchronization

/// UserDefaults over the simulation root: the same search list, domains and
/// rules, with persistent domains shared between processes.
///
/// Search list, first hit wins:
/// 0. the managed domain (what an administrator forced for this instance's
///    own domain on this device, `ManagedPreferences`: the app's for the
///    standard instance, the suite's for a suite, as CoreFoundation's search
///    list has "this app, managed"): read-only, above everything, so a
///    forced key's value wins over launch arguments and the app's own writes
/// 1. argument domain (this process's `-key value` launch arguments)
/// 2. this instance's own persistent domain (the app's bundle id, or the suite)
/// 3. suites added with `addSuite(named:)`, the last added first (each goes
///    just below the instance's own domain, as CoreFoundation inserts it)
/// 4. `NSGlobalDomain`
/// 5. the languages domain
/// 6. the registration domain (`register(defaults:)`, this process only)
///
/// Writes go to the instance's own persistent domain only.
/// Unchecked Sendable: its suites are under `lock`, its snapshot in a `Locked`, its counters atomic, its observers under `observation.lock`; the domains lock their own state.
public final class GroupDefaults: @unchecked Sendable {
    public let context: DefaultsContext
    /// The persistent domain this instance writes to.
    public let domainName: String
    public let processDomains: ProcessDomains
    let own: PersistentDomain
    let global: PersistentDomain
    /// The managed domain of this instance's own domain; this process never writes it.
    let managed: PersistentDomain
    private let lock = Locked()
    private var suites: [PersistentDomain] = []
    /// Moves when a suite is added or removed.
    private let searchListVersion = ContentVersion()
    /// What reads are answered from; replaced by the first read after a source changed.
    private let cachedSnapshot = Locked<SearchListSnapshot?>(nil)
    private let snapshotBuilds = Atomic<Int>(0)
    /// Observer plumbing (see GroupDefaults+Observing.swift).
    let observation = ObservationState()

    /// The app's standard defaults: its own bundle identifier's domain.
    /// - Parameters:
    ///   - context: The device, bundle identifier and app groups of the process.
    ///   - processDomains: The process's volatile, argument and registration domains.
    /// - Throws: `DefaultsError` when a domain makes no path inside the simulation root; the file system's error when a domain's file cannot be opened.
    public convenience init(context: DefaultsContext, processDomains: ProcessDomains = .shared) throws {
        try self.init(domain: context.bundleIdentifier, context: context, processDomains: processDomains)
    }

    /// `UserDefaults(suiteName:)`: a suite (for example an app group's id).
    /// Refused, as on Apple platforms, for `NSGlobalDomain` and for the app's
    /// own bundle identifier (use the standard instance for that).
    /// - Parameters:
    ///   - suiteName: The suite's domain name.
    ///   - context: The device, bundle identifier and app groups of the process.
    ///   - processDomains: The process's volatile, argument and registration domains.
    /// - Throws: `DefaultsError.refusedSuite` for those two names; otherwise as `init(context:processDomains:)`.
    public convenience init(suiteName: String, context: DefaultsContext, processDomains: ProcessDomains = .shared) throws {
        if suiteName == DomainName.global {
            throw DefaultsError.refusedSuite(
                name: suiteName, reason: "NSGlobalDomain is not a suite; its keys are already in every instance's search list")
        }
        if suiteName == context.bundleIdentifier {
            throw DefaultsError.refusedSuite(name: suiteName, reason: "it is this app's own bundle identifier; use the standard defaults instead")
        }
        try self.init(domain: suiteName, context: context, processDomains: processDomains)
    }

    private init(domain: String, context: DefaultsContext, processDomains: ProcessDomains) throws {
        self.context = context
        self.domainName = domain
        self.processDomains = processDomains
        own = try context.open(domain)
        global = try context.open(DomainName.global)
        managed = try context.openManaged(domain)
    }

    deinit { stopObserving() }

    // MARK: Search list

    /// The domain names searched, in order. The managed domain is always
    /// searched first, but listed only while it holds something (an app no
    /// administrator manages shows the list it has on an unmanaged device).
    public var searchList: [String] {
        (managed.snapshot().isEmpty ? [] : [DomainName.managed]) + [DomainName.argument, domainName] + addedSuites.map(\.name) + [
            DomainName.global, DomainName.languages, DomainName.registration,
        ]
    }

    package var addedSuites: [PersistentDomain] { lock.withLock { suites } }

    /// A source of values in search order.
    enum Source {
        case volatile(String)
        case persistent(PersistentDomain)

        var name: String {
            switch self {
            case .volatile(let name): name
            case .persistent(let domain): domain.name
            }
        }
    }

    var sources: [Source] {
        [.persistent(managed), .volatile(DomainName.argument), .persistent(own)] + addedSuites.map { .persistent($0) }
            + [.persistent(global), .volatile(DomainName.languages), .volatile(DomainName.registration)]
    }

    func value(in source: Source, forKey key: String) -> PlistValue? {
        switch source {
        case .volatile(let name): processDomains.volatileDomain(named: name)[key]
        case .persistent(let domain): domain.value(forKey: key)
        }
    }

    /// The snapshot of the whole search list as it is now: the cached one,
    /// unless a source changed since it was built.
    func currentSnapshot() -> SearchListSnapshot {
        currentSnapshot(anyChange: ContentVersion.anyChangeCount)
    }

    /// `anyChange`: `ContentVersion.anyChangeCount`, read before any source's version.
    private func currentSnapshot(anyChange: UInt64) -> SearchListSnapshot {
        let listVersion = searchListVersion.current
        let cached = cachedSnapshot.withLock { cached -> SearchListSnapshot? in
            guard let snapshot = cached else { return nil }
            if snapshot.isCurrent(anyChange: anyChange) { return snapshot }
            guard snapshot.isCurrent(searchListVersion: listVersion, processDomains: processDomains) else { return nil }
            snapshot.markCurrent(at: anyChange)
            return snapshot
        }
        if let cached { return cached }
        let built = SearchListSnapshot(
            anyChange: anyChange, searchListVersion: listVersion, processDomains: processDomains, managed: managed, own: own,
            suites: addedSuites, global: global)
        snapshotBuilds.add(1, ordering: .relaxed)
        cachedSnapshot.withLock { $0 = built }
        return built
    }

    /// A key's effective value: while no source moved since the cached
    /// snapshot was found current, one atomic load, one uncontended lock and
    /// one hash look-up, with nothing allocated or retained but the value.
    @inline(__always)
    private func effectiveValue(forKey key: String) -> PlistValue? {
        let anyChange = ContentVersion.anyChangeCount
        // Optional chaining reads the snapshot in place: `guard let` would copy the reference (a retain and a release).
        let hit = cachedSnapshot.withLock { cached in cached?.valueIfCurrent(forKey: key, anyChange: anyChange) }
        if let hit { return hit }
        return currentSnapshot(anyChange: anyChange).value(forKey: key)
    }

    /// How many times this instance built its snapshot (for tests and diagnostics).
    package var snapshotBuildCount: Int { snapshotBuilds.load(ordering: .relaxed) }

    /// The effective value and the domain it comes from.
    /// - Parameter key: The key.
    /// - Returns: nil when no domain of the search list has the key.
    public func lookup(_ key: String) -> (value: PlistValue, domain: String)? {
        currentSnapshot().lookup(key)
    }

    /// The effective value, or nil when no domain has the key (unlike
    /// `bool(forKey:)`, this tells "absent" from "false").
    /// - Parameter key: The key.
    /// - Returns: The value of the first domain in the search list that has the key.
    public func value(forKey key: String) -> PlistValue? { effectiveValue(forKey: key) }

    /// The effective value in Foundation form, as `UserDefaults.object(forKey:)`.
    /// - Parameter key: The key.
    /// - Returns: Numbers and booleans as `NSNumber`, dates, data, strings, arrays and dictionaries as Foundation's types; nil when absent.
    public func object(forKey key: String) -> Any? { value(forKey: key)?.foundationValue }

    /// Every effective key and value, lower domains overridden by higher ones.
    /// - Returns: One dictionary of every domain in the search list.
    public func dictionaryRepresentation() -> [String: PlistValue] { representation { $0 } }

    /// The effective keys and values in a face's form, made by `make` from
    /// the plain ones once per state of the search list: until a source
    /// changes, a call returns the dictionary the last one made, so a face's
    /// `dictionaryRepresentation()` called again costs a look-up, not a
    /// conversion of every key. One form per value type (the first `make` for a type makes it).
    package func representation<Value>(_ make: ([String: PlistValue]) -> [String: Value]) -> [String: Value] {
        currentSnapshot().representation(make)
    }

    // MARK: Managed preferences

    /// `objectIsForced(forKey:)`: whether an administrator fixed the key's
    /// value in this instance's own domain (the app's, or the suite's; its
    /// value then comes from the managed domain, whatever this process writes).
    /// - Parameter key: The key.
    /// - Returns: true when the managed domain holds the key.
    public func isForced(_ key: String) -> Bool { managed.value(forKey: key) != nil }

    /// `objectIsForced(forKey:inDomain:)`: whether the key is forced in the
    /// managed preferences of `domain` on this device. A domain nobody
    /// manages forces nothing; a name that cannot be a domain forces nothing.
    /// - Parameters:
    ///   - key: The key.
    ///   - domain: The domain whose managed preferences are asked.
    /// - Returns: true when that domain's managed preferences hold the key.
    public func isForced(_ key: String, inDomain domain: String) -> Bool {
        if domain == domainName || domain == DomainName.managed { return isForced(key) }
        guard let other = try? context.openManaged(domain) else { return false }
        return other.value(forKey: key) != nil
    }

    /// Calls `handler` (on the library's notification queue) each time a
    /// commit of this process takes the instance's own domain to its
    /// platform's warning size (tvOS: 512 KiB), from below it or first in
    /// this process: how the Foundation face posts `sizeLimitExceededNotification`.
    /// Nil on every other platform, which never warns.
    package func onSizeLimitWarning(_ handler: @escaping @Sendable () -> Void) -> DefaultsObservation? {
        let own = self.own
        guard let id = own.addSizeWarningListener(handler) else { return nil }
        return DefaultsObservation { own.removeSizeWarningListener(id) }
    }

    /// Calls `handler` (on the library's notification queue) each time
    /// another process changes this app's managed domain: how the Foundation
    /// face posts `didChangeNotification` when an administrator pushes a change.
    package func onManagedChange(_ handler: @escaping @Sendable () -> Void) -> DefaultsObservation {
        let managed = self.managed
        let id = managed.addListener { change in if change.origin == .otherProcess { handler() } }
        return DefaultsObservation { managed.removeListener(id) }
    }

    // MARK: Writing

    /// Sets a key in this instance's own domain; nil removes it.
    /// - Parameters:
    ///   - value: The new value; nil removes the key.
    ///   - key: The key.
    public func set(_ value: PlistValue?, forKey key: String) {
        set(value, forKey: key, postingDidChange: true)
    }

    /// `postingDidChange` false: for a face that posts its own notification
    /// for the call (each costs about half a microsecond, even unobserved).
    package func set(_ value: PlistValue?, forKey key: String, postingDidChange: Bool) {
        if let version = own.set(value, forKey: key) { patchSnapshot(value, forKey: key, ownVersion: version) }
        if postingDidChange { postDidChange() }
    }

    /// Carries the cached snapshot through this instance's own set, so a read
    /// right after a set is a look-up, not a rebuild. Only when nothing else
    /// changed meanwhile (else the next read rebuilds), and on a copy if a
    /// reader on another thread still holds the cached one.
    private func patchSnapshot(_ value: PlistValue?, forKey key: String, ownVersion: UInt64) {
        let anyChange = ContentVersion.anyChangeCount
        let listVersion = searchListVersion.current
        cachedSnapshot.withLock { cached in
            guard var snapshot = cached else { return }
            cached = nil
            guard own.version.current == ownVersion,
                snapshot.isCurrent(searchListVersion: listVersion, processDomains: processDomains, exceptOwn: true)
            else { return }
            if !isKnownUniquelyReferenced(&snapshot) { snapshot = snapshot.copy() }
            if snapshot.applyOwnSet(value, forKey: key, version: ownVersion) {
                snapshot.markCurrent(at: anyChange)
                cached = snapshot
            }
        }
    }

    /// Sets a Foundation value (String, Int, Double, Bool, Date, Data, URL,
    /// arrays and string-keyed dictionaries of these). Anything else throws.
    /// - Parameters:
    ///   - value: The new value; nil removes the key.
    ///   - key: The key.
    /// - Throws: `DefaultsError.notAPropertyList`, naming the key path of the first value that is not a property list; nothing is written then.
    public func set(any value: Any?, forKey key: String) throws {
        guard let value else { return set(nil, forKey: key) }
        do {
            set(try PlistValue(any: value, path: key), forKey: key)
        } catch let error as PropertyListError {
            throw DefaultsError.notAPropertyList(key: key, reason: error.description)
        }
    }

    /// Removing a key that a lower domain also holds makes the lower value visible.
    /// - Parameter key: The key.
    public func removeObject(forKey key: String) { set(nil, forKey: key) }

    /// Returns when every change made before it is durable on disk.
    /// - Returns: false when the changes could not be saved (`flush()` says why).
    @discardableResult
    public func synchronize() -> Bool {
        do {
            try own.synchronize()
            return true
        } catch {
            Diagnostics.report(Diagnostic(kind: .commitFailed, message: "synchronize() of \(domainName) failed: \(error)", path: own.file.path))
            return false
        }
    }

    /// `synchronize()` that says why it failed.
    /// - Throws: The error that kept the domain's pending changes from being saved.
    public func flush() throws { try own.synchronize() }

    /// An atomic read-modify-write of this instance's domain across
    /// processes: counters, appends, anything that must not lose an update.
    /// - Parameter body: Changes the domain's contents; it runs under the domain's file lock, so keep it short.
    /// - Throws: What `body` throws (the domain is then left as it was), `DefaultsError.nestedTransaction` inside another transaction of the domain, or the file's error.
    /// - Returns: What `body` returns.
    public func transaction<T>(_ body: (inout [String: PlistValue]) throws -> T) throws -> T {
        let result = try own.transaction(body)
        postDidChange()
        return result
    }

    /// Adds `delta` to an integer key atomically and returns the new value.
    /// - Parameters:
    ///   - key: An integer key; absent counts as 0.
    ///   - delta: What to add.
    /// - Throws: `DefaultsError.wrongType` when the key holds no integer, `DefaultsError.overflow` when the sum leaves `Int64`.
    /// - Returns: The new value.
    @discardableResult
    public func increment(_ key: String, by delta: Int64 = 1) throws -> Int64 {
        try transaction { contents in
            let sum = try DefaultsWriteRequest.incremented(contents[key], by: delta, key: key)
            contents[key] = .integer(sum)
            return sum
        }
    }

    /// Registers defaults for this process (every instance of it sees them; no other process does).
    /// - Parameter defaults: Keys and values for the registration domain, merged into what it holds.
    public func register(defaults: [String: PlistValue]) {
        processDomains.register(defaults)
    }

    // MARK: Suites

    /// Adds a suite to the search list just below this instance's own
    /// domain, so the suite added last is searched first (as on Apple
    /// platforms); all come before the global domain. Adding a suite already
    /// in the list changes nothing. The app's own id and the global domain are refused.
    /// - Parameter name: The suite's domain name.
    /// - Throws: `DefaultsError.refusedSuite` for those names; as `init(context:processDomains:)` when the suite cannot be opened.
    public func addSuite(named name: String) throws {
        if name == DomainName.global || name == context.bundleIdentifier || name == domainName {
            throw DefaultsError.refusedSuite(name: name, reason: "the app's own domain and NSGlobalDomain are already searched")
        }
        let domain = try context.open(name)
        let added = lock.withLock { () -> Bool in
            if suites.contains(where: { $0 === domain }) { return false }
            suites.insert(domain, at: 0)
            searchListVersion.bump()
            return true
        }
        if added { observeIfObserved(domain) }
    }

    /// Removes a suite that `addSuite(named:)` added; a name not in the search list changes nothing.
    /// - Parameter name: The suite's domain name.
    public func removeSuite(named name: String) {
        let removed = lock.withLock { () -> PersistentDomain? in
            guard let index = suites.firstIndex(where: { $0.name == name }) else { return nil }
            searchListVersion.bump()
            return suites.remove(at: index)
        }
        guard let removed else { return }
        // The old snapshot must not keep the removed suite's domain alive.
        cachedSnapshot.withLock { $0 = nil }
        unobserve(removed)
    }

    // MARK: Domains

    /// A persistent domain's contents as this process sees them; nil for a
    /// volatile domain's name and for a domain that does not exist (holds no
    /// keys: as on Apple platforms, where an emptied domain's file goes).
    /// Creates nothing.
    /// - Parameter name: The domain name.
    /// - Throws: `DefaultsError` when the name makes no path inside the root; the file's error when it cannot be read.
    /// - Returns: The domain's keys and values, or nil.
    public func persistentDomain(forName name: String) throws -> [String: PlistValue]? {
        if processDomains.volatileDomainNames.contains(name) { return nil }
        let path = try context.locate(name).path
        let contents: [String: PlistValue]
        if let open = DomainRegistry.shared.openDomain(at: path) {
            contents = open.snapshot()
        } else {
            // A domain this process released (after setPersistentDomain, say) is saved first.
            PersistentDomain.waitForReleasedCommits()
            contents = try SharedPlistFile.read(path: path) ?? [:]
        }
        return contents.isEmpty ? nil : contents
    }

    /// Replaces a persistent domain. The argument and registration domains are refused.
    /// - Parameters:
    ///   - contents: The domain's new keys and values.
    ///   - name: The domain name.
    /// - Throws: `DefaultsError.refusedDomain` for a volatile domain's name; the file's error when it cannot be written.
    public func setPersistentDomain(_ contents: [String: PlistValue], forName name: String) throws {
        try refuseVolatile(name)
        try context.open(name).replaceAll(with: contents)
        postDidChange()
    }

    /// Removes every key of a persistent domain.
    /// - Parameter name: The domain name.
    /// - Throws: `DefaultsError.refusedDomain` for a volatile domain's name; the file's error when it cannot be written.
    public func removePersistentDomain(forName name: String) throws {
        try refuseVolatile(name)
        try context.open(name).replaceAll(with: nil)
        postDidChange()
    }

    /// A volatile domain's contents in this process; empty when there is none by that name.
    /// - Parameter name: The volatile domain's name.
    /// - Returns: Its keys and values.
    public func volatileDomain(forName name: String) -> [String: PlistValue] {
        processDomains.volatileDomain(named: name)
    }

    /// Sets a volatile domain of this process (kept in memory, never written to disk).
    /// - Parameters:
    ///   - contents: The domain's keys and values.
    ///   - name: The volatile domain's name.
    /// - Throws: `DefaultsError.refusedDomain` for the argument, registration and languages domains, which the system maintains.
    public func setVolatileDomain(_ contents: [String: PlistValue], forName name: String) throws {
        if name == DomainName.argument || name == DomainName.registration || name == DomainName.languages {
            throw DefaultsError.refusedDomain(name: name, reason: "it is maintained by the system; use launch arguments or register(defaults:)")
        }
        processDomains.setVolatileDomain(contents, named: name)
    }

    /// Removes a volatile domain of this process; an unknown name changes nothing.
    /// - Parameter name: The volatile domain's name.
    public func removeVolatileDomain(forName name: String) {
        processDomains.removeVolatileDomain(named: name)
    }

    public var volatileDomainNames: [String] { processDomains.volatileDomainNames }

    private func refuseVolatile(_ name: String) throws {
        if processDomains.volatileDomainNames.contains(name) {
            throw DefaultsError.refusedDomain(
                name: name, reason: "it is a volatile domain, never stored; only persistent domains can be set or removed")
        }
    }

    /// Commit and reload counters of this instance's own domain (shared by the process).
    package var domainStatistics: PersistentDomain.Statistics { own.statistics }

    /// The file this instance's own domain is stored in.
    public var path: String { own.file.path }
}
