/// Listeners of domain changes, kept under their owner's lock (the owner
/// calls these while holding it).
struct ListenerList {
    private var listeners: [Int: @Sendable (DomainChange) -> Void] = [:]
    private var nextID = 0

    var isEmpty: Bool { listeners.isEmpty }
    var all: [@Sendable (DomainChange) -> Void] { Array(listeners.values) }

    mutating func add(_ listener: @escaping @Sendable (DomainChange) -> Void) -> Int {
        nextID += 1
        listeners[nextID] = listener
        return nextID
    }

    mutating func remove(_ id: Int) { listeners.removeValue(forKey: id) }

    /// Hands a change to every listener on the notification queue, in order.
    func deliver(_ change: DomainChange) {
        guard !listeners.isEmpty else { return }
        let targets = all
        PersistentDomain.notificationQueue.async { for target in targets { target(change) } }
    }
}
