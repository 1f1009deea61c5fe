import CloudModel
import Foundation
import GroupDefaults
import PropertyList

/// Mirrors the keys with a prefix between a defaults domain (the standard
/// domain or an app-group suite) and an iCloud key-value store, both ways,
/// removals included.
///
/// `.fixed` never echoes and never lets a first launch overwrite the cloud:
/// - a value is copied only where the two sides differ, so a value that
///   arrived from the cloud, once written to defaults, finds the cloud
///   already holding it and goes nowhere: one change, one upload;
/// - it watches the domain for every process's writes (the widget's too),
///   and only the domain's own values: registered defaults and launch
///   arguments are never uploaded;
/// - until the store's first download (InitialSyncChange) nothing goes up;
///   then the cloud's values win and only keys the cloud lacks are uploaded.
///
/// `.naive` is the widespread `CloudDefaults` pattern, kept to show what goes
/// wrong: on every `didChangeNotification` of this process it uploads every
/// prefixed key of `dictionaryRepresentation()` (registered defaults
/// included, before the first download), guarded by an "ignore local
/// changes" flag; removals are never mirrored; other processes' writes are
/// never seen.
/// Unchecked Sendable: its observer handles are set in `init` and read in `deinit` only; `ignoreLocalChanges` is touched only on `queue` (serial), where both sides' changes are applied.
package final class CloudDefaultsBridge: @unchecked Sendable {
    package enum Mode: String, Sendable, CaseIterable {
        case fixed, naive
    }

    package let defaults: GroupDefaults
    package let store: UbiquitousStore
    package let prefix: String
    package let mode: Mode
    /// Where the bridge's work runs, one change at a time (the app's main queue in the pattern).
    private let queue = DispatchQueue(label: "groupsim.cloud-bridge")
    private static let onBridgeQueue = DispatchSpecificKey<Bool>()
    private var observation: DefaultsObservation?
    private var storeObserver: Int?
    private var notificationToken: NSObjectProtocol?
    /// `.naive`: the pattern's flag, set while cloud values are copied into defaults.
    private var ignoreLocalChanges = false

    package init(defaults: GroupDefaults, store: UbiquitousStore, prefix: String = "sync-", mode: Mode = .fixed) {
        self.defaults = defaults
        self.store = store
        self.prefix = prefix
        self.mode = mode
        queue.setSpecific(key: Self.onBridgeQueue, value: true)
    }

    deinit {
        if let storeObserver { store.removeObserver(storeObserver) }
        if let notificationToken { NotificationCenter.default.removeObserver(notificationToken) }
    }

    package func start() {
        switch mode {
        case .fixed:
            storeObserver = store.observeExternalChanges { [weak self] change in
                guard let self else { return }
                self.queue.async { self.cloudChanged(change) }
            }
            observation = defaults.observe(nil) { [weak self] change in
                guard let self, change.key.hasPrefix(self.prefix) else { return }
                self.queue.async { self.localChanged(change.key) }
            }
            queue.async { if self.store.initialSyncDone { self.reconcile() } }
        case .naive:
            storeObserver = store.observeExternalChanges { [weak self] _ in
                guard let self else { return }
                self.queue.async { self.updateLocal() }
            }
            notificationToken = NotificationCenter.default.addObserver(
                forName: GroupDefaults.didChangeNotification, object: nil, queue: nil
            ) { [weak self] _ in
                // Delivered before `post` returns, as NotificationCenter does
                // for an observer on the posting queue: the flag is still set
                // for the bridge's own writes.
                guard let self else { return }
                if DispatchQueue.getSpecific(key: Self.onBridgeQueue) == true { self.updateRemote() } else { self.queue.sync { self.updateRemote() } }
            }
            _ = store.synchronize()
        }
    }

    /// Returns once everything the bridge was told so far is done.
    package func waitUntilIdle() { queue.sync {} }

    // MARK: Fixed

    /// The value the domain itself holds (not a registered default or an argument).
    private func localValue(_ key: String) -> PlistValue? {
        (try? defaults.persistentDomain(forName: defaults.domainName))??[key]
    }

    private func localChanged(_ key: String) {
        // Before the first download the cloud's values are unknown: wait for them.
        guard store.initialSyncDone else { return }
        upload(key)
    }

    private func upload(_ key: String) {
        let local = localValue(key)
        guard local != store.object(forKey: key) else { return }
        do { try store.set(local, forKey: key) } catch {
            Diagnostics.report(
                Diagnostic(
                    kind: .commitFailed, message: "the iCloud bridge could not write \(key) to the store \(store.identifier): \(error)", path: nil))
        }
    }

    private func download(_ key: String) {
        let cloud = store.object(forKey: key)
        guard cloud != localValue(key) else { return }
        defaults.set(cloud, forKey: key)
    }

    private func cloudChanged(_ change: ExternalChange) {
        switch change.reason {
        case .initialSyncChange:
            reconcile()
        case .serverChange, .accountChange:
            for key in change.keys where key.hasPrefix(prefix) { download(key) }
        case .quotaViolationChange:
            break
        }
    }

    /// After the first download: the cloud's values win; keys only this device has go up.
    private func reconcile() {
        let cloudKeys = store.dictionaryRepresentation().keys.filter { $0.hasPrefix(prefix) }
        for key in cloudKeys.sorted() { download(key) }
        let localKeys = ((try? defaults.persistentDomain(forName: defaults.domainName)) ?? nil)?.keys.filter { $0.hasPrefix(prefix) } ?? []
        for key in Set(localKeys).subtracting(cloudKeys).sorted() { upload(key) }
    }

    // MARK: Naive (the pattern as it is usually written)

    private func updateRemote() {
        guard !ignoreLocalChanges else { return }
        for (key, value) in defaults.dictionaryRepresentation() where key.hasPrefix(prefix) {
            _ = try? store.set(value, forKey: key)
        }
    }

    private func updateLocal() {
        ignoreLocalChanges = true
        for (key, value) in store.dictionaryRepresentation() where key.hasPrefix(prefix) {
            defaults.set(value, forKey: key)
        }
        ignoreLocalChanges = false
    }
}
