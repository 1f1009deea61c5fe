import PropertyList

/// iCloud's upload throttling, per store (one app's store): "the frequency of
/// upload requests for key-value storage is limited to several per minute",
/// and `synchronize()` does not force one (docs/apple-traps.md). A store's
/// writes go up at most once per interval; what waits meanwhile is the copy's
/// `pending`, one entry per key, so the upload that ends the wait carries the
/// latest value of each key changed since the last one: a burst of writes
/// becomes a few changes on the other devices. Times are the device's
/// (`DeviceTime`: the real time, moved on by the device's simulated clock),
/// so advancing the clock lets a held upload go without a real wait. Owned
/// by the agent's actor.
struct UploadThrottle {
    /// When each store's last upload was sent, on the device's time.
    private var lastUpload: [String: ContinuousClock.Instant] = [:]
    /// Stores whose hold was announced (once per hold, for the timeline).
    private var announced: Set<String> = []
    /// The copy's `nextSequence` at each store's last upload: the local writes since are its difference.
    private var sequenceAtUpload: [String: Int64] = [:]

    /// nil: `store` may upload now; else how long until it may. The first
    /// time a store is held, says so (`throttled`: the store, the changes
    /// held, when they go up).
    mutating func hold(
        _ store: String, interval: Int64, changes: Int, now: ContinuousClock.Instant = .now,
        events: (String, [String: PlistValue]) -> Void
    ) -> Duration? {
        guard interval > 0, let last = lastUpload[store] else { return nil }
        let opens = last + .milliseconds(interval)
        guard now < opens else { return nil }
        let wait = opens - now
        if announced.insert(store).inserted {
            let ms = Int64(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
            events("throttled", ["store": .string(store), "changes": .integer(Int64(changes)), "uploadInMs": .integer(ms)])
        }
        return wait
    }

    /// Records an upload of `store` sent now; returns how many local writes
    /// it carries (nil for the agent's first upload of the store: it does not know).
    mutating func sent(_ store: String, nextSequence: Int64, now: ContinuousClock.Instant = .now) -> Int64? {
        lastUpload[store] = now
        announced.remove(store)
        defer { sequenceAtUpload[store] = nextSequence }
        return sequenceAtUpload[store].map { nextSequence - $0 }
    }
}
