import GroupDefaults
import SharedFiles

/// The commits a domain made between two readings of its statistics, and
/// the mean time of each phase, as one line.
struct CommitTimingsReport {
    let count: Int
    let line: String

    init(before: PersistentDomain.Statistics, after: PersistentDomain.Statistics) {
        count = after.commits - before.commits
        let (a, b) = (after.commitTimings, before.commitTimings)
        let commits = Double(max(count, 1))
        func mean(_ later: UInt64, _ earlier: UInt64) -> String { milliseconds(Double(later - earlier) / commits) }
        line =
            "lock wait \(mean(a.lockWait, b.lockWait))  read+decode \(mean(a.readAndDecode, b.readAndDecode))  "
            + "encode \(mean(a.encode, b.encode))  write+journal \(mean(a.writeAndJournal, b.writeAndJournal))  "
            + "exchange \(mean(a.exchange, b.exchange))"
    }
}
