/// Listeners of domain changes, kept under their owner's lock (the owner
/// calls these while holding it).
///
/// A listener is either queued (every change, on the notification queue, in
/// order) or inline (only this process's changes, on the thread that made
/// them, before the call that made them returns, as KVO delivers). Inline
/// calls are handed back to the owner, which makes them once it has released
/// its lock, so a listener may read or write defaults itself.
///
/// Each kind is kept as a ready list in the order listeners were added, so a
/// change costs nothing when nobody listens and no sorting when someone does.
struct ListenerList {
    private typealias Call = @Sendable (DomainChange) -> Void

    private var queued: [(id: Int, call: Call)] = []
    private var inline: [(id: Int, call: Call)] = []
    private var nextID = 0

    var isEmpty: Bool { queued.isEmpty && inline.isEmpty }
    var count: Int { queued.count + inline.count }

    mutating func add(inline isInline: Bool = false, _ listener: @escaping @Sendable (DomainChange) -> Void) -> Int {
        nextID += 1
        // Ids only grow, so appending keeps each list in the order listeners were added.
        if isInline { inline.append((nextID, listener)) } else { queued.append((nextID, listener)) }
        return nextID
    }

    mutating func remove(_ id: Int) {
        queued.removeAll { $0.id == id }
        inline.removeAll { $0.id == id }
    }

    /// Queues the change for the queued listeners and returns what the inline
    /// ones are owed (nothing for another process's change).
    func deliver(_ change: DomainChange) -> InlineDelivery {
        if !queued.isEmpty {
            let targets = queued.map(\.call)
            PersistentDomain.notificationQueue.async { for target in targets { target(change) } }
        }
        guard change.origin == .thisProcess, !inline.isEmpty else { return InlineDelivery() }
        return InlineDelivery(change: change, targets: inline.map(\.call))
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
