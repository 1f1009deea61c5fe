/// The events a program has begun and not yet queued on its control channel
/// (an observer called that has not returned), and the `flush-events`
/// requests waiting for them. A request is answered once nothing begun
/// before it came is still running, so a driver that read a line the
/// observer printed, then flushes, has that observer's `delivery` too.
/// Not thread-safe: the channel keeps it under its lock.
struct EventsInFlight {
    /// Token → when the event began (CLOCK_MONOTONIC, ns).
    private var running: [Int: UInt64] = [:]
    private var nextToken = 0
    /// Flush requests not yet answered: their ids and when they came.
    private var waiting: [(id: String, came: UInt64)] = []

    /// Notes an event begun at `stamp`; its token ends it.
    mutating func begin(at stamp: UInt64) -> Int {
        nextToken += 1
        running[nextToken] = stamp
        return nextToken
    }

    mutating func end(_ token: Int) { running[token] = nil }

    /// A flush request that came at `stamp`: true if it may be answered now, else it waits.
    mutating func flush(id: String, at stamp: UInt64) -> Bool {
        if isClear(before: stamp) { return true }
        waiting.append((id, stamp))
        return false
    }

    /// The ids of the waiting requests nothing running holds back any more, in the order they came (removed).
    mutating func answerable() -> [String] {
        guard !waiting.isEmpty else { return [] }
        let oldest = running.values.min() ?? .max
        let ready = waiting.filter { $0.came <= oldest }
        waiting.removeAll { $0.came <= oldest }
        return ready.map(\.id)
    }

    /// How many flush requests wait (an observer that never returns holds them all).
    var waitingCount: Int { waiting.count }

    private func isClear(before stamp: UInt64) -> Bool { !running.values.contains { $0 < stamp } }
}
