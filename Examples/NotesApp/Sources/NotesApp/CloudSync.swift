import NotesShared

#if canImport(Darwin)
    import Foundation
#else
    import SimulatedFoundation  // Linux: Foundation with groupsim's UserDefaults and iCloud store
#endif
#if canImport(os)
    import os
#else
    import SimulatedOSLog
#endif

private let logger = Logger(subsystem: "com.example.notesapp", category: "icloud")

/// Keeps the settings whose key starts with `prefix` in iCloud: a change in
/// the app group's suite goes up to the key-value store, a change from iCloud
/// comes down into the suite (where the widget sees it). The CloudDefaults
/// pattern, with the three things it needs to be safe:
///
/// - Only the suite's stored values go up: registered defaults and launch
///   arguments belong to this launch, not to the user (uploading them is how a
///   new device's first launch overwrites what the others wrote).
/// - A key goes up only when its value differs from the store's. A value that
///   came down is the store's already, so it is never sent back (no echo), and
///   an unchanged value is never stamped again (which would win over a newer
///   change from another device still on its way).
/// - At launch, and at the device's first download, iCloud's values win: what
///   other devices wrote while the app was not running shows; only keys iCloud
///   lacks go up.
///
/// Removals are not mirrored. Changes made by other processes (the intent
/// extension) go up with the app's next change. What comes down is told to
/// `didApplyChanges` (the app reloads its widget: nothing else tells it).
final class CloudSync: @unchecked Sendable {  // its state is guarded by `lock`
    static let prefix = "sync-"

    private let defaults: UserDefaults
    private let store: NSUbiquitousKeyValueStore
    private let didApplyChanges: @Sendable () -> Void
    /// Held while applying changes in either direction. Recursive: applying a
    /// change from iCloud writes to the suite, which posts
    /// didChangeNotification on the same thread.
    private let lock = NSRecursiveLock()
    private var applyingRemoteChanges = false
    private var observers: [NSObjectProtocol] = []

    init(
        defaults: UserDefaults = .shared, store: NSUbiquitousKeyValueStore = .default,
        didApplyChanges: @escaping @Sendable () -> Void
    ) {
        self.defaults = defaults
        self.store = store
        self.didApplyChanges = didApplyChanges
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }

    func start() {
        let center = NotificationCenter.default
        lock.withLock {
            observers.append(
                center.addObserver(
                    forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
                ) { [weak self] note in self?.updateLocal(note) })
            observers.append(
                center.addObserver(
                    forName: UserDefaults.didChangeNotification, object: nil, queue: nil
                ) { [weak self] _ in self?.updateRemote() })
        }
        store.synchronize()
        let prefixed = store.dictionaryRepresentation.keys.filter { $0.hasPrefix(Self.prefix) }
        lock.withLock {
            applyDown(prefixed)
            upload(onlyKeysTheCloudLacks: true)
        }
    }

    /// Copies this process's changed prefixed settings up to iCloud.
    private func updateRemote() {
        lock.withLock {
            guard !applyingRemoteChanges else { return }
            upload(onlyKeysTheCloudLacks: false)
        }
    }

    private func upload(onlyKeysTheCloudLacks: Bool) {
        let stored = defaults.persistentDomain(forName: appGroupIdentifier) ?? [:]
        for key in stored.keys.sorted() where key.hasPrefix(Self.prefix) {
            let value = stored[key]
            let remote = store.object(forKey: key)
            if onlyKeysTheCloudLacks && remote != nil { continue }
            if !sameValue(value, remote) {
                store.set(value, forKey: key)
                logger.info("up \(key, privacy: .public)=\(describe(value), privacy: .public)")
            }
        }
    }

    /// Copies what iCloud changed down into the suite.
    private func updateLocal(_ note: Notification) {
        let reason = (note.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? NSNumber)?.intValue ?? -1
        let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
        if reason == NSUbiquitousKeyValueStoreQuotaViolationChange {
            logger.error("over quota, kept on this device: \(keys.joined(separator: ", "), privacy: .public)")
            return
        }
        lock.withLock {
            applyDown(keys)
            if reason == NSUbiquitousKeyValueStoreInitialSyncChange {
                logger.info("first download done")
                upload(onlyKeysTheCloudLacks: true)
            }
        }
    }

    /// Writes the store's values of `keys` into the suite, where they differ.
    private func applyDown(_ keys: [String]) {
        applyingRemoteChanges = true
        defer { applyingRemoteChanges = false }
        var applied = false
        defer { if applied { didApplyChanges() } }
        for key in keys.sorted() where key.hasPrefix(Self.prefix) {
            let value = store.object(forKey: key)
            let stored = defaults.persistentDomain(forName: appGroupIdentifier)?[key]
            guard !sameValue(value, stored) else { continue }
            if let value {
                defaults.set(value, forKey: key)
            } else {
                defaults.removeObject(forKey: key)
            }
            applied = true
            logger.info("down \(key, privacy: .public)=\(describe(value), privacy: .public)")
        }
    }
}

/// Whether two property-list values are equal (nil only equals nil).
func sameValue(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (let a?, let b?): return NSDictionary(dictionary: ["value": a]).isEqual(to: ["value": b])
    default: return false
    }
}
