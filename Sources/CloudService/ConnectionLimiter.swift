import Foundation
import Guarded
import NIOCore

/// Counts the cloud's open connections against a cap below the descriptor
/// limit, so a flood of connections never leaves the cloud without
/// descriptors for its files; and keeps strangers from taking the places of
/// peers that have a secret.
///
/// A connection is a stranger until its request shows a secret the cloud
/// accepts. Strangers have a small budget of their own (a quarter of the
/// cap): when it is full, the oldest stranger is closed to make room for the
/// new one. A client with a secret sends its request as it connects, so it
/// shows its secret long before a flood of others that never do pushes it
/// out. A connection that showed a secret (a device's WebSocket, a request
/// of the CLI) counts against the rest of the cap, and is refused past it.
/// Unchecked Sendable: the counts are read and changed under `lock` only
/// (connections come and go on every event loop).
final class ConnectionLimiter: @unchecked Sendable {
    static let ceiling = 1024
    /// Connections open at once, strangers included.
    let maximum: Int
    /// Connections open at once that have not shown a secret yet.
    let strangerBudget: Int
    /// Connections open at once that have shown one.
    var trustedBudget: Int { maximum - strangerBudget }

    private let lock = Locked()
    /// Strangers by their channel, with the order they came in.
    private var strangers: [ObjectIdentifier: (order: UInt64, channel: any Channel)] = [:]
    private var arrivals: UInt64 = 0
    private var trusted: Set<ObjectIdentifier> = []

    init(maximum: Int) {
        self.maximum = max(2, maximum)
        strangerBudget = max(1, self.maximum / 4)
    }

    /// Half the soft descriptor limit (the rest is for the cloud's files), at most `ceiling`.
    static func maximumForDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 128 }
        return Int(max(1, min(UInt64(ceiling), UInt64(limit.rlim_cur) / 2)))
    }

    /// A new connection, a stranger; returns the oldest stranger, which the
    /// caller closes, when the strangers' budget was full.
    func admit(_ channel: any Channel) -> (any Channel)? {
        lock.withLock {
            var oldest: (any Channel)? = nil
            if strangers.count >= strangerBudget, let first = strangers.min(by: { $0.value.order < $1.value.order }) {
                strangers[first.key] = nil
                oldest = first.value.channel
            }
            arrivals += 1
            strangers[ObjectIdentifier(channel)] = (arrivals, channel)
            return oldest
        }
    }

    enum Trust {
        /// It counts against the trusted budget now.
        case admitted
        /// The trusted budget is full: the request is refused.
        case full(open: Int)
        /// It was closed as a stranger meanwhile.
        case gone
    }

    /// The connection showed a secret the cloud accepts.
    func trust(_ channel: any Channel) -> Trust {
        lock.withLock {
            let id = ObjectIdentifier(channel)
            guard strangers[id] != nil else { return trusted.contains(id) ? .admitted : .gone }
            guard trusted.count < trustedBudget else { return .full(open: trusted.count) }
            strangers[id] = nil
            trusted.insert(id)
            return .admitted
        }
    }

    /// Whether the connection has not shown a secret yet (and is not closed).
    func isStranger(_ channel: any Channel) -> Bool { lock.withLock { strangers[ObjectIdentifier(channel)] != nil } }

    /// The connection closed: its place is free.
    func release(_ channel: any Channel) {
        lock.withLock {
            let id = ObjectIdentifier(channel)
            strangers[id] = nil
            trusted.remove(id)
        }
    }
}
