import CloudModel
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import SharedFiles

/// One iCloud key-value store as an app process sees it
/// (`NSUbiquitousKeyValueStore`): reads and writes go to the device's copy
/// at once, the device's sync agent takes them up later, and values arriving
/// from the cloud are announced to every process of the device that holds
/// the store, with the reason and the keys. Local writes are not announced.
/// Unchecked Sendable: the cursor, observers and listener are read and changed under `lock`; the copy's file work runs on the serial commit queue.
package final class UbiquitousStore: @unchecked Sendable {
    package let identifier: String
    package let cloud: DeviceCloud
    private let domain: PersistentDomain
    private let settings: PersistentDomain
    private let lock = Locked()
    /// How far this process has posted the copy's notices (guarded by `lock`).
    private var cursor: NoticeCursor
    private var observers: [Int: @Sendable (ExternalChange) -> Void] = [:]
    private var nextObserver = 0
    private var listener: Int?

    /// Whether the device's agent syncs this store (false: a process without
    /// the entitlement, whose store stays on the device).
    package let syncs: Bool

    /// `observer`: called for every external change from the start (before the
    /// agent can know of the store, so its first download is never missed).
    package init(cloud: DeviceCloud, identifier: String, syncs: Bool = true, observer: (@Sendable (ExternalChange) -> Void)? = nil) throws {
        self.cloud = cloud
        self.identifier = identifier
        self.syncs = syncs
        if let observer {
            nextObserver = 1
            observers[1] = observer
        }
        settings = try cloud.settingsDomain()
        domain = try cloud.storeDomain(identifier)
        // A copy another tool left malformed does not stop the app: it is
        // reported here, and every write names the file and field until fixed.
        do {
            cursor = NoticeCursor(at: try StoreCopy(domain.snapshot(), path: domain.file.path))
        } catch {
            cursor = NoticeCursor(at: StoreCopy())
            Diagnostics.report(
                Diagnostic(
                    kind: .reloadFailed, message: "\(error); writes to this store fail until the file is fixed or removed", path: domain.file.path))
        }
        // Listening before the store is registered, so the first download's notice is never missed.
        listener = domain.addListener { [weak self] change in
            guard change.changes.contains(where: { $0.key == "notices" }) else { return }
            self?.deliverNotices()
        }
        // The agent syncs the stores the device's apps have opened.
        if syncs {
            do {
                // From the file, not the cached view: a file that cannot be read is left for its owner to fix, never replaced.
                let current = try cloud.readSettings()
                for problem in current.problems { Diagnostics.report(Diagnostic(kind: .reloadFailed, message: problem, path: settings.file.path)) }
                if !current.stores.contains(identifier) {
                    try cloud.updateSettings(makingSecret: false) { if !$0.stores.contains(identifier) { $0.stores.append(identifier) } }
                }
            } catch {
                Diagnostics.report(
                    Diagnostic(
                        kind: .reloadFailed, message: "\(error); the store \(identifier) is not synced until the file is fixed or removed",
                        path: settings.file.path))
            }
        }
    }

    deinit {
        if let listener { domain.removeListener(listener) }
        // Writes not saved yet are saved by whoever released the store last.
        if !unsaved.isEmpty { _ = try? commitUnsaved() }
    }

    private func copy() -> StoreCopy {
        // The file was checked when opened; a copy another process made
        // unreadable since reads as empty, as a corrupt defaults file does.
        (try? StoreCopy(domain.snapshot(), path: domain.file.path)) ?? StoreCopy()
    }

    // MARK: Reading

    package func object(forKey key: String) -> PlistValue? {
        if let unsavedValue = lock.withLock({ overlay[key] }) { return unsavedValue }
        return domain.value(forKey: "values")?.dictionaryValue?[key]
    }

    package func dictionaryRepresentation() -> [String: PlistValue] {
        var values = domain.value(forKey: "values")?.dictionaryValue ?? [:]
        for (key, value) in lock.withLock({ overlay }) { values[key] = value }
        return values
    }

    // Typed reads, as NSUbiquitousKeyValueStore converts: numbers and
    // booleans into one another, anything else of the wrong type to nil (0, false).

    package func string(forKey key: String) -> String? { object(forKey: key)?.stringValue }
    package func data(forKey key: String) -> Data? { object(forKey: key)?.dataValue }
    package func array(forKey key: String) -> [PlistValue]? { object(forKey: key)?.arrayValue }
    package func dictionary(forKey key: String) -> [String: PlistValue]? { object(forKey: key)?.dictionaryValue }

    package func longLong(forKey key: String) -> Int64 {
        switch object(forKey: key) {
        case .integer(let number)?: number
        case .real(let number)? where number.isFinite: Int64(exactly: number.rounded(.towardZero)) ?? (number < 0 ? .min : .max)
        case .bool(let flag)?: flag ? 1 : 0
        default: 0
        }
    }

    package func double(forKey key: String) -> Double {
        switch object(forKey: key) {
        case .integer(let number)?: Double(number)
        case .real(let number)?: number
        case .bool(let flag)?: flag ? 1 : 0
        default: 0
        }
    }

    package func bool(forKey key: String) -> Bool {
        switch object(forKey: key) {
        case .integer(let number)?: number != 0
        case .real(let number)?: number != 0
        case .bool(let flag)?: flag
        default: false
        }
    }

    /// The account signed in on the device, as this copy knows it.
    package var account: String? { copy().account }
    /// The copy's commits made by this process, and where their time went (for benchmarks).
    package var commitStatistics: PersistentDomain.Statistics { domain.statistics }

    /// Whether this device's first download of the store (for its account) has arrived.
    package var initialSyncDone: Bool { domain.value(forKey: "initialSyncDone") == .bool(true) }

    // MARK: Writing

    /// Writes made in this process and not yet in the device's copy, oldest
    /// first, each with the real time it was made (guarded by `lock`; the
    /// clock skew is added when saved).
    private var unsaved: [(key: String, value: PlistValue?, time: Int64)] = []
    /// The newest unsaved value of each key, for reads (nil inside: removed).
    private var overlay: [String: PlistValue?] = [:]
    private var commitScheduled = false
    /// Commits unsaved writes, one transaction per batch: a burst of writes
    /// costs one rewrite of the copy, not one each.
    private let commitQueue = DispatchQueue(label: "groupsim.cloud.commit")

    /// Sets (nil: removes) `key`: visible in this process at once, in the
    /// device's copy (and so to its other processes and its agent) moments
    /// later, as Apple's store keeps writes in memory and saves them soon
    /// after. `flush` (and `synchronize`) wait for it. A key over 64 bytes is
    /// refused (`CloudDeviceError.keyTooLong`: on Apple platforms an exception that ends the
    /// app), and so is a value that nests too deep; a value over a limit is
    /// kept on the device, never uploaded, and QuotaViolationChange is posted.
    package func set(_ value: PlistValue?, forKey key: String) throws {
        guard CloudLimits.size(ofKey: key) <= CloudLimits.maximumKeyBytes else { throw CloudDeviceError.keyTooLong(key: key) }
        if let value { try value.checkNesting(what: "the value for key \"\(key)\"", limit: CloudLimits.maximumValueNesting) }
        // The real time; the device's clock skew is added when the batch is saved.
        let now = DeviceCloudSettings.realTime()
        let schedule = lock.withLock { () -> Bool in
            unsaved.append((key, value, now))
            overlay[key] = .some(value)
            defer { commitScheduled = true }
            return !commitScheduled
        }
        if schedule {
            Self.track(self)
            commitQueue.async { [weak self] in _ = try? self?.commitUnsaved() }
        }
    }

    /// Reads the device's copy now and posts, before returning, every notice
    /// this process has not posted yet (the first download the sync agent
    /// just wrote, say), instead of when inotify tells: what a `synchronize`
    /// answers for includes what the observers do with them.
    package func takeInNotices() {
        domain.reloadFromDisk()
        deliverNotices()
    }

    /// Returns once every write made so far is in the device's copy; returns
    /// the limits they broke (kept on the device), or throws what kept them
    /// out (they stay unsaved, to be tried again).
    @discardableResult
    package func flush() throws -> [String] {
        try commitQueue.sync { try commitUnsaved() }
    }

    private func commitUnsaved() throws -> [String] {
        let writes = lock.withLock { () -> [(key: String, value: PlistValue?, time: Int64)] in
            commitScheduled = false
            defer { unsaved = [] }
            return unsaved
        }
        guard !writes.isEmpty else { return [] }
        // The device's clock, once per batch and from the file, not from this
        // process's cached view of it: a clock another process set a moment
        // ago is seen there only once inotify tells. With unreadable
        // settings the clock has no skew: the writes are not lost for it.
        let current = (try? cloud.readSettings()) ?? DeviceCloudSettings()
        let skew = current.clockSkewMilliseconds
        // Signed in: a write made before the first download waits for it, and may be overwritten by it.
        let held = syncs && current.account != nil && !current.keepsWritesBeforeFirstDownload
        do {
            // Lock order: the file's lock (the transaction's), then `lock`; `lock` is not held here, and the
            // transaction's body never takes it, so a `set` never waits behind the disk or another process.
            let violations = try domain.transaction { fields -> [String] in
                var copy = try StoreCopy(fields, path: domain.file.path)
                let found = writes.compactMap {
                    copy.write($0.value, forKey: $0.key, device: cloud.device, time: $0.time + skew, heldForFirstDownload: held)
                }
                fields = copy.plist
                return found
            }
            // The copy now answers for these keys, unless written again since.
            lock.withLock { overlay = Dictionary(unsaved.map { ($0.key, $0.value) }, uniquingKeysWith: { _, newer in newer }) }
            return violations
        } catch {
            lock.withLock { unsaved = writes + unsaved }
            Diagnostics.report(
                Diagnostic(
                    kind: .commitFailed,
                    message:
                        "could not save \(writes.count) write(s) to the iCloud store \(identifier): \(errorClause(error)). They stay in this process and are tried again on the next write or synchronize().",
                    path: domain.file.path))
            throw error
        }
    }

    /// Apple's `synchronize()`: true once this process's writes are in the
    /// device's copy and the device has an account; false with no account,
    /// as iCloud answers when it is not available.
    package func synchronize() -> Bool {
        do {
            try flush()
            try domain.synchronize()
        } catch { return false }
        guard syncs else { return false }
        return (try? DeviceCloudSettings(settings.snapshot(), path: settings.file.path).account) != nil
    }

    /// Stores with unsaved writes; saved at exit, as the domains are.
    private static let liveLock = Locked()
    nonisolated(unsafe) private static var live: [ObjectIdentifier: WeakStore] = [:]
    private static let flushAtExit: Void = { atexit { UbiquitousStore.flushAll() } }()

    private final class WeakStore {
        weak var store: UbiquitousStore?
        init(_ store: UbiquitousStore) { self.store = store }
    }

    private static func track(_ store: UbiquitousStore) {
        flushAtExit
        liveLock.withLock { live[ObjectIdentifier(store)] = WeakStore(store) }
    }

    /// Saves every store's unsaved writes (at exit; the simulated apps call it before saying goodbye).
    package static func flushAll() {
        let stores = liveLock.withLock { live.values.compactMap(\.store) }
        for store in stores { _ = try? store.flush() }
    }

    // MARK: External changes

    /// Calls `handler` for every external change from now on, on the
    /// notification queue, after the new values are readable.
    @discardableResult
    func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> Int {
        lock.withLock {
            nextObserver += 1
            observers[nextObserver] = handler
            return nextObserver
        }
    }

    func removeObserver(_ id: Int) {
        lock.withLock { _ = observers.removeValue(forKey: id) }
    }

    /// Posts the notices this process has not posted yet; after a pause
    /// longer than the copy keeps notices for, one per reason for everything
    /// that changed meanwhile (`NoticeCursor`).
    private func deliverNotices() {
        let (changes, handlers) = lock.withLock { () -> ([ExternalChange], [@Sendable (ExternalChange) -> Void]) in
            // Read under the lock, so the cursor only ever moves forward.
            // An unreadable copy tells nothing: the cursor waits for a
            // readable one (read as empty, it would announce every value as removed).
            guard let current = try? StoreCopy(domain.snapshot(), path: domain.file.path) else { return ([], []) }
            return (cursor.advance(to: current, device: cloud.device), observers.keys.sorted().compactMap { observers[$0] })
        }
        for change in changes {
            for handler in handlers { handler(change) }
        }
    }
}
