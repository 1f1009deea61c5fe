import CloudModel
import Foundation
import GroupDefaults
import Guarded

// Apple's pattern for the iCloud store: make it, register for
// `didChangeExternallyNotification`, call `synchronize()`. On a device the
// first download takes seconds, so its notice always finds the observer; here
// the device's copy may announce it while `.default` is still being made, or
// between that and the app's `addObserver`, and a notice posted then is lost.
// So nothing is posted to a store until the app could have observed it: its
// notices are held until the process registers for the notification (of this
// store, or of any object) or calls the store's `synchronize()`, then posted
// in order before any later one. A process that does neither could not have
// heard them on a device either.

/// One store's notices, held until the gate opens.
/// Unchecked Sendable: `isOpen` and `held` are read and changed under `lock`.
final class NoticeGate: @unchecked Sendable {
    private let lock = Locked()
    private var isOpen = false
    private var held: [ExternalChange] = []

    /// On the notification queue: whether `change` may be posted now; if not, it is held.
    func admits(_ change: ExternalChange) -> Bool {
        lock.withLock {
            if isOpen || NSUbiquitousKeyValueStore.madeStores.everyStoreObserved { return true }
            held.append(change)
            return false
        }
    }

    /// Whether the gate is open (a store's notices are posted as they come).
    var opened: Bool { lock.withLock { isOpen } }

    /// On the notification queue: opens the gate, returning what it held (nil if it was open).
    func open() -> [ExternalChange]? {
        lock.withLock {
            guard !isOpen else { return nil }
            isOpen = true
            defer { held = [] }
            return held
        }
    }
}

/// The stores a process made (weakly), and whether it observes the
/// notification of every object.
/// Unchecked Sendable: both are read and changed under `lock`.
final class MadeStores: @unchecked Sendable {
    private let lock = Locked()
    private var stores: [() -> NSUbiquitousKeyValueStore?] = []
    private var observedForEveryObject = false

    var everyStoreObserved: Bool { lock.withLock { observedForEveryObject } }

    func add(_ store: NSUbiquitousKeyValueStore) {
        lock.withLock {
            stores.removeAll { $0() == nil }
            stores.append { [weak store] in store }
        }
    }

    /// Marks every object observed; the stores made so far.
    func observeEveryObject() -> [NSUbiquitousKeyValueStore] {
        lock.withLock {
            observedForEveryObject = true
            return stores.compactMap { $0() }
        }
    }
}

extension NSUbiquitousKeyValueStore {
    static let madeStores = MadeStores()

    /// The app could now observe this store's notices: those held are posted
    /// on the notification queue, after every notice already queued and
    /// before any later one (the gate opens there, so none overtakes them).
    func letNoticesGo() {
        // Every kvs- request of a driver and every synchronize() asks: once open, there is nothing to queue.
        guard !noticeGate.opened else { return }
        PersistentDomain.afterPendingNotifications { [weak self] in
            guard let self, let held = self.noticeGate.open() else { return }
            for change in held { self.post(change) }
        }
    }

    /// The process observes the notification of every object: every store's gate opens.
    static func letEveryStoresNoticesGo() {
        for store in madeStores.observeEveryObject() { store.letNoticesGo() }
    }
}

/// Foundation's `addObserver(forName:object:queue:using:)`, which Swift picks
/// over Foundation's own for an object that is an iCloud store or `nil`: it
/// registers with Foundation, then (for `didChangeExternallyNotification`, or
/// every name) lets the store's held notices go, since the app can now hear them.
extension NotificationCenter {
    /// - Parameters:
    ///   - name: The notification's name; nil for every name.
    ///   - store: The store whose notifications are wanted; nil for every object.
    ///   - queue: Where the block runs; nil for the posting thread.
    ///   - block: Called with each notification.
    /// - Returns: Foundation's token; pass it to `removeObserver(_:)` to stop.
    public func addObserver(
        forName name: NSNotification.Name?, object store: NSUbiquitousKeyValueStore?, queue: OperationQueue?,
        using block: @escaping @Sendable (Notification) -> Void
    ) -> NSObjectProtocol {
        let token = addObserver(forName: name, object: store as Any?, queue: queue, using: block)
        if name == nil || name == NSUbiquitousKeyValueStore.didChangeExternallyNotification {
            if let store { store.letNoticesGo() } else { NSUbiquitousKeyValueStore.letEveryStoresNoticesGo() }
        }
        return token
    }
}
