/// Listeners of domain changes, kept under their owner's lock (the owner
/// calls these while holding it).
///
/// A listener is either queued (every change, on the notification queue, in
/// order) or inline (only this process's changes, on the thread that made
/// them, before the call that made them returns, as KVO delivers). Inline
/// calls are handed back to the owner, which makes them once it has released
/// its lock, so a listener may read or write defaults itself.
struct ListenerList {
    private struct Listener {
        let inline: Bool
        let call: @Sendable (DomainChange) -> Void
    }

    private var listeners: [Int: Listener] = [:]
    private var nextID = 0

    var isEmpty: Bool { listeners.isEmpty }

    mutating func add(inline: Bool = false, _ listener: @escaping @Sendable (DomainChange) -> Void) -> Int {
        nextID += 1
        listeners[nextID] = Listener(inline: inline, call: listener)
        return nextID
    }

    mutating func remove(_ id: Int) { listeners.removeValue(forKey: id) }

    /// Queues the change for the queued listeners and returns what the inline
    /// ones are owed (nothing for another process's change).
    func deliver(_ change: DomainChange) -> InlineDelivery {
        guard !listeners.isEmpty else { return InlineDelivery() }
        let ordered = listeners.sorted { $0.key < $1.key }.map(\.value)
        let queued = ordered.filter { !$0.inline }.map(\.call)
        if !queued.isEmpty {
            PersistentDomain.notificationQueue.async { for target in queued { target(change) } }
        }
        guard change.origin == .thisProcess else { return InlineDelivery() }
        return InlineDelivery(change: change, targets: ordered.filter(\.inline).map(\.call))
    }
}

/// Calls owed to inline listeners, made by `run()` on the changing thread
/// once no lock of the library is held.
struct InlineDelivery {
    private var calls: [(change: DomainChange, targets: [@Sendable (DomainChange) -> Void])] = []

    init() {}

    init(change: DomainChange, targets: [@Sendable (DomainChange) -> Void]) {
        if !targets.isEmpty { calls = [(change, targets)] }
    }

    mutating func append(_ other: InlineDelivery) { calls += other.calls }

    func run() {
        for call in calls { for target in call.targets { target(call.change) } }
    }
}
