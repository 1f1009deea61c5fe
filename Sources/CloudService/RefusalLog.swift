import CloudModel
import Foundation
import Guarded
import PropertyList

/// The cloud's lines about peers it refused or closed (`unauthorized`,
/// `refused-connection`, `dropped-connection`), bounded: a stranger decides
/// how many such lines there are and what they hold, and the log is on the
/// disk that holds the cloud's data. Each field is cut at `fieldBytes`
/// (saying its full length), and at most `linesPerSecond` lines are written
/// in any one second; the refusals past that are counted, and one
/// `refusals-suppressed` line says how many of each once the second is over.
/// Unchecked Sendable: the window's counts are read and changed under `lock`
/// only (refusals come from every event loop); lines are written under it
/// too, so a summary never comes after a line of the next second.
final class RefusalLog: @unchecked Sendable {
    static let linesPerSecond = 10
    /// Enough for the cloud's own reasons whole; a stranger's path or method is cut here.
    static let fieldBytes = 400

    typealias Events = @Sendable (String, [String: PlistValue]) -> Void

    private let events: Events
    private let window: Duration
    private let lock = Locked()
    /// When the current second began (nil before the first refusal).
    private var windowStart: ContinuousClock.Instant?
    private var written = 0
    /// Refusals not written in the current second, by event.
    private var suppressed: [String: Int] = [:]
    /// The second whose summary is scheduled, if one is.
    private var summaryScheduledFor: ContinuousClock.Instant?

    init(events: @escaping Events, window: Duration = .seconds(1)) {
        self.events = events
        self.window = window
    }

    /// Writes `event` with `fields` (each cut), or counts it when this second has had its lines.
    func report(_ event: String, _ fields: [String: String]) {
        lock.withLock {
            let now = ContinuousClock.now
            if let start = windowStart, now - start < window {
                guard written < Self.linesPerSecond else {
                    suppressed[event, default: 0] += 1
                    scheduleSummaryLocked(for: start, at: start + window)
                    return
                }
            } else {
                writeSummaryLocked()
                windowStart = now
                written = 0
            }
            written += 1
            events(event, fields.mapValues { .string(CloudFormatError.cut($0, bytes: Self.fieldBytes)) })
        }
    }

    /// The summary goes out when the second is over, whether or not another refusal comes.
    private func scheduleSummaryLocked(for start: ContinuousClock.Instant, at end: ContinuousClock.Instant) {
        guard summaryScheduledFor != start else { return }
        summaryScheduledFor = start
        let left = (end - ContinuousClock.now).components
        let nanoseconds = max(0, left.seconds * 1_000_000_000 + left.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [weak self] in
            guard let self else { return }
            lock.withLock {
                // A refusal of the next second already wrote it.
                guard windowStart == start else { return }
                writeSummaryLocked()
            }
        }
    }

    private func writeSummaryLocked() {
        summaryScheduledFor = nil
        guard !suppressed.isEmpty else { return }
        let count = suppressed.values.reduce(0, +)
        events(
            "refusals-suppressed",
            [
                "count": .integer(Int64(count)), "events": .dictionary(suppressed.mapValues { .integer(Int64($0)) }),
                "message": .string(
                    "\(count) more refusal\(count == 1 ? " was" : "s were") not logged: at most \(Self.linesPerSecond) refusal lines are written a second"
                ),
            ])
        suppressed = [:]
    }
}
