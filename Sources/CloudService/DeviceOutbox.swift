import Guarded
import NIOCore

/// The frames waiting to go to one device, bounded in bytes: a device that
/// does not read what it is sent is disconnected (it resyncs when it comes
/// back) instead of growing the cloud's memory. The cloud's actor adds,
/// the connection's writer task takes away.
final class DeviceOutbox: Sendable {
    private let continuation: AsyncStream<OutgoingFrame>.Continuation
    private let limit: Int
    private let disconnect: @Sendable (String) -> Void
    /// Bytes queued, or nil once the device was disconnected for falling behind.
    private let queued = Locked<Int?>(0)

    init(_ continuation: AsyncStream<OutgoingFrame>.Continuation, limit: Int, disconnect: @escaping @Sendable (String) -> Void) {
        self.continuation = continuation
        self.limit = limit
        self.disconnect = disconnect
    }

    private static func size(_ frame: OutgoingFrame) -> Int {
        switch frame {
        case .text(let text, _): text.utf8.count
        case .pong(let data): data.readableBytes
        }
    }

    func yield(_ frame: OutgoingFrame) {
        let size = Self.size(frame)
        let admitted = queued.withLock { queued -> Bool? in
            guard let waiting = queued else { return nil }
            // One message is always let through, however large: the limit bounds what piles up behind it.
            guard waiting == 0 || waiting + size <= limit else {
                queued = nil
                return false
            }
            queued = waiting + size
            return true
        }
        switch admitted {
        case true?: continuation.yield(frame)
        case false?:
            continuation.finish()
            disconnect("the device fell behind: it had not read \(limit >> 20) MiB sent to it")
        case nil: break
        }
    }

    /// The writer sent `frame`.
    func sent(_ frame: OutgoingFrame) {
        let size = Self.size(frame)
        queued.withLock { $0 = $0.map { max(0, $0 - size) } }
    }

    func finish() { continuation.finish() }
}
