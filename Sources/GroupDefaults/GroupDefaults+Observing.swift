import Foundation
import Guarded
import PropertyList

/// A change of one key's *effective* value, as an instance's observers see it.
public struct DefaultsChange: Sendable, Equatable {
    public let key: String
    public let old: PlistValue?
    public let new: PlistValue?
    /// Whether this process or another made the change.
    public let origin: ChangeOrigin
    /// The domain that was written to.
    public let changedDomain: String
    /// The domain the new effective value comes from (nil if the key is now absent).
    public let valueDomain: String?
}

/// Keeps an observer registered; cancelling (or releasing) it stops delivery.
/// Unchecked Sendable: `cancelled` is read and set under `lock`; `onCancel` is a constant run once.
public final class DefaultsObservation: @unchecked Sendable {
    private let onCancel: () -> Void
    private let lock = Locked()
    private var cancelled = false

    init(onCancel: @escaping () -> Void) { self.onCancel = onCancel }

    /// Stops delivery; calling it again does nothing.
    public func cancel() {
        let first = lock.withLock { () -> Bool in
            defer { cancelled = true }
            return !cancelled
        }
        if first { onCancel() }
    }

    deinit { cancel() }
}

/// Unchecked Sendable: every variable is read and changed under `lock`.
final class ObservationState: @unchecked Sendable {
    struct Observer {
        let key: String?
        let queue: DispatchQueue?
        /// Told of this process's changes inline, before the call that made them returns.
        let synchronous: Bool
        let handler: @Sendable (DefaultsChange) -> Void
    }

    let lock = Locked()
    /// Each domain's queued and inline listener ids, while anyone observes.
    var domainListeners: [ObjectIdentifier: (PersistentDomain, [Int])] = [:]
    var processListeners: [Int] = []
    /// In the order they were added (ids only grow), so delivery needs no sorting.
    var observers: [(id: Int, observer: Observer)] = []
    var nextObserverID = 0
    /// Whether this instance listens to its domains. Only while it has an
    /// observer: a change nobody observes then costs no dispatch.
    var listening = false
}

extension GroupDefaults {
    /// Posted synchronously on the writing thread for changes this process
    /// makes through this instance, as `UserDefaults.didChangeNotification`.
    /// Changes from other processes never post it: observe them instead.
    /// A key set or removed through `SimulatedFoundation.UserDefaults` posts
    /// that face's own notification instead of this one (one post per call).
    public static let didChangeNotification = Notification.Name("GroupDefaultsDidChangeNotification")

    /// Calls `handler` whenever the effective value of `key` (or, with nil,
    /// of any key) changes, whichever process made the change. Writing the
    /// same value, or a value hidden by a higher domain, calls nobody.
    /// `queue` nil runs the handler on the library's notification queue.
    /// - Parameters:
    ///   - key: The key to watch; nil for every key.
    ///   - queue: Where the handler runs.
    ///   - handler: Called with each change.
    /// - Returns: The registration; delivery stops when it is cancelled or released.
    public func observe(_ key: String?, queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (DefaultsChange) -> Void) -> DefaultsObservation {
        addObserver(ObservationState.Observer(key: key, queue: queue, synchronous: false, handler: handler))
    }

    /// Observes as KVO does: a change this process makes (through any
    /// instance, a transaction or `register(defaults:)` included) reaches
    /// `handler` on the thread that made it, before the call that made it
    /// returns; a change from another process arrives on the library's
    /// notification queue. An observer added after a change is never told of
    /// it. Only effective values count, as for `observe`.
    /// - Parameters:
    ///   - key: The key to watch; nil for every key.
    ///   - handler: Called with each change.
    /// - Returns: The registration; delivery stops when it is cancelled or released.
    public func observeSynchronously(_ key: String?, _ handler: @escaping @Sendable (DefaultsChange) -> Void) -> DefaultsObservation {
        addObserver(ObservationState.Observer(key: key, queue: nil, synchronous: true, handler: handler))
    }

    private func addObserver(_ observer: ObservationState.Observer) -> DefaultsObservation {
        let id = observation.lock.withLock { () -> Int in
            observation.nextObserverID += 1
            observation.observers.append((observation.nextObserverID, observer))
            if !observation.listening { startListeningLocked() }
            return observation.nextObserverID
        }
        return DefaultsObservation { [weak self] in
            guard let self else { return }
            self.observation.lock.withLock {
                self.observation.observers.removeAll { $0.id == id }
                if self.observation.observers.isEmpty { self.stopListeningLocked() }
            }
        }
    }

    /// The changes of `key` (or of every key) as an async sequence.
    /// - Parameter key: The key to watch; nil for every key.
    /// - Returns: A stream that ends its observation when iteration stops.
    public func changes(forKey key: String? = nil) -> AsyncStream<DefaultsChange> {
        AsyncStream { continuation in
            let token = observe(key) { continuation.yield($0) }
            continuation.onTermination = { _ in token.cancel() }
        }
    }

    func postDidChange() {
        NotificationCenter.default.post(name: Self.didChangeNotification, object: self)
    }

    /// Listens to every domain of the search list (observation lock held;
    /// the domains' locks are taken inside it, never the other way round).
    private func startListeningLocked() {
        observation.listening = true
        for domain in [managed, own, global] + addedSuites { listenLocked(to: domain) }
        observation.processListeners = [
            processDomains.addListener { [weak self] change in self?.deliver(change, inline: false) },
            processDomains.addListener(inline: true) { [weak self] change in self?.deliver(change, inline: true) },
        ]
    }

    private func stopListeningLocked() {
        guard observation.listening else { return }
        observation.listening = false
        for (domain, ids) in observation.domainListeners.values { for id in ids { domain.removeListener(id) } }
        observation.domainListeners = [:]
        for id in observation.processListeners { processDomains.removeListener(id) }
        observation.processListeners = []
    }

    private func listenLocked(to domain: PersistentDomain) {
        guard observation.domainListeners[ObjectIdentifier(domain)] == nil else { return }
        let ids = [
            domain.addListener { [weak self] change in self?.deliver(change, inline: false) },
            domain.addListener(inline: true) { [weak self] change in self?.deliver(change, inline: true) },
        ]
        observation.domainListeners[ObjectIdentifier(domain)] = (domain, ids)
    }

    func stopObserving() {
        observation.lock.withLock { stopListeningLocked() }
    }

    /// A suite just added is listened to if this instance has observers.
    func observeIfObserved(_ domain: PersistentDomain) {
        observation.lock.withLock { if observation.listening { listenLocked(to: domain) } }
    }

    func unobserve(_ domain: PersistentDomain) {
        let entry = observation.lock.withLock { observation.domainListeners.removeValue(forKey: ObjectIdentifier(domain)) }
        if let (domain, ids) = entry { for id in ids { domain.removeListener(id) } }
    }

    /// Turns a change of one domain into changes of effective values: a key
    /// hidden by a higher domain did not change for this instance, and a
    /// removal reveals the next lower domain's value. Runs on the
    /// notification queue, so changes arrive in the order they happened; or,
    /// `inline`, on the thread that made this process's change, for the
    /// synchronous observers (which the queue then only tells of other
    /// processes' changes, so none hears a change twice).
    func deliver(_ change: DomainChange, inline: Bool) {
        let observers = observation.lock.withLock {
            observation.observers.compactMap { entry -> ObservationState.Observer? in
                let observer = entry.observer
                return (inline ? observer.synchronous : !observer.synchronous || change.origin == .otherProcess) ? observer : nil
            }
        }
        guard !observers.isEmpty else { return }
        let sources = self.sources
        guard let index = sources.firstIndex(where: { $0.name == change.domain }) else { return }
        for keyChange in change.changes {
            let key = keyChange.key
            if sources[..<index].contains(where: { value(in: $0, forKey: key) != nil }) { continue }
            // The next lower domain matters only for a side where this domain has no value.
            let lower =
                keyChange.old != nil && keyChange.new != nil
                ? nil
                : sources[(index + 1)...].lazy.compactMap { source in
                    self.value(in: source, forKey: key).map { (value: $0, domain: source.name) }
                }.first
            let old = keyChange.old ?? lower?.value
            let new = keyChange.new ?? lower?.value
            guard old != new else { continue }
            let effective = DefaultsChange(
                key: key, old: old, new: new, origin: change.origin, changedDomain: change.domain,
                valueDomain: keyChange.new != nil ? change.domain : lower?.domain)
            for observer in observers where observer.key == nil || observer.key == key {
                if let queue = observer.queue { queue.async { observer.handler(effective) } } else { observer.handler(effective) }
            }
        }
    }
}
