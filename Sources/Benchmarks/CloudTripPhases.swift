import ChildProcess
import CloudDevice
import Foundation
import PropertyList
import SharedFiles

/// Where one change's trip through the cloud spends its time: the moments
/// the processes on the path said (their event lines carry the clock when
/// `EventClock` is on), one change at a time.
struct CloudTripPhases {
    /// The hops, in the order a change makes them, each named by where its time goes.
    static let hops = [
        "A's copy commit, inotify, A's agent wakes",
        "A's agent reads its copy, sends the upload",
        "upload on the wire, the cloud takes it",
        "the cloud's ledger commit (durable), pushes queued",
        "push on the wire to B's agent",
        "B's agent commits B's copy",
        "inotify, B's app reloads, is told",
    ]
    /// Signed: B's app may be told of B's copy before B's agent, its commit returned, says so.
    private(set) var samples: [[Int64]] = Array(repeating: [], count: hops.count)

    /// Reads the moments of the change just measured, from `set` to `seen`:
    /// the writer's agent's last wake-up before its upload of the probe, the
    /// cloud's receipt and store of it, the reader's agent's receipt and
    /// application of the push.
    mutating func record(set: UInt64, seen: UInt64, writerAgent: RunningProcess, cloud: RunningProcess, readerAgent: RunningProcess)
        throws
    {
        let (woke, uploaded) = try Self.moments(of: writerAgent, before: "upload", marking: "woke") { Self.names($0, "keys", "probe") }
        let (received, stored) = try Self.moments(of: cloud, before: "stored", marking: "upload-received") { Self.names($0, "keys", "probe") }
        let (pushed, applied) = try Self.moments(of: readerAgent, before: "applied", marking: "push-received") { Self.names($0, "keys", "probe") }
        let moments = [set, woke, uploaded, received, stored, pushed, applied, seen]
        for hop in Self.hops.indices { samples[hop].append(Int64(bitPattern: moments[hop + 1] &- moments[hop])) }
    }

    /// Consumes `process`'s lines up to its first event `end` that `matches`,
    /// and returns its clock with that of the last `mark` event before it.
    private static func moments(
        of process: RunningProcess, before end: String, marking mark: String, matches: ([String: PlistValue]) -> Bool
    ) throws -> (mark: UInt64, end: UInt64) {
        var marked: UInt64?
        while true {
            guard let line = try process.nextLine(timeout: 60) else {
                throw ChildProcessError.outputEnded(expected: end)
            }
            guard let json = try? PlistJSON.parse(line), let fields = (try? PlistJSON.decode(json))?.dictionaryValue,
                case .string(let event)? = fields["event"], case .integer(let clock)? = fields["clock"]
            else { continue }
            if event == mark { marked = UInt64(clock) }
            if event == end && matches(fields) {
                guard let marked else { throw ChildProcessError.unexpectedLine(expected: "no \(mark) event before \(end)", line: line) }
                return (marked, UInt64(clock))
            }
        }
    }

    private static func names(_ fields: [String: PlistValue], _ field: String, _ name: String) -> Bool {
        fields[field]?.arrayValue?.contains(.string(name)) == true
    }

    /// One line per hop: median and mean in milliseconds, and the medians' sum.
    func table() -> String {
        var lines = ["  where the time goes (per hop, ms; \(samples[0].count) changes):"]
        for (name, values) in zip(Self.hops, samples) {
            let sorted = values.sorted()
            let median = sorted.isEmpty ? 0 : Double(sorted[sorted.count / 2])
            let mean = sorted.isEmpty ? 0 : Double(sorted.reduce(0, +)) / Double(sorted.count)
            lines.append("    p50 \(milliseconds(median))  mean \(milliseconds(mean))  \(name)")
        }
        return lines.joined(separator: "\n")
    }
}
