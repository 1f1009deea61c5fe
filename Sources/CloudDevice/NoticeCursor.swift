import CloudModel
import PropertyList

/// How far one process has read its device's copy of a store, and what the
/// copy held then: enough to tell the process what changed even when it
/// missed notices. A copy keeps only its last `StoreCopy.keptNotices`
/// notices, so a process that was not reading (stopped, or busy) while more
/// came would lose the oldest; then what it missed is found by comparing the
/// copy with what it last saw, and posted coalesced, as Apple coalesces the
/// notifications of an app that was suspended. Costs no space in the file.
struct NoticeCursor: Sendable {
    /// The serial of the newest notice this process has posted.
    private(set) var serial: Int64
    private var account: String?
    private var initialSyncDone: Bool
    private var values: [String: PlistValue]
    /// The copy's next sequence then: a value stamped by this device at or
    /// after it is a write the device made since, which is never announced.
    private var nextSequence: Int64
    /// The over-quota writes already announced (their sequences).
    private var overQuota: Set<Int64>

    /// At `copy` as it is: nothing in it is news to this process.
    init(at copy: StoreCopy) {
        serial = copy.lastNoticeSerial
        account = copy.account
        initialSyncDone = copy.initialSyncDone
        values = copy.values
        nextSequence = copy.nextSequence
        overQuota = Self.overQuotaSequences(copy)
    }

    /// What to post for `copy` (read whole, after the last call), oldest
    /// first; the cursor moves to `copy`. `device`: this device's name.
    mutating func advance(to copy: StoreCopy, device: String) -> [ExternalChange] {
        let kept = copy.notices.filter { $0.serial > serial }
        // Notices after `serial` were dropped before this process read them
        // (or the copy was made anew: its serials went back).
        let oldestKeptIsLater =
            copy.notices.first.map { oldest in
                // Serials come from the file: compared without overflow.
                let (gap, overflow) = oldest.serial.subtractingReportingOverflow(serial)
                return overflow || gap > 1
            } ?? false
        let missed = oldestKeptIsLater || copy.lastNoticeSerial < serial
        let changes = missed ? whatChanged(to: copy, device: device) : kept.map(\.change)
        self = NoticeCursor(at: copy)
        return changes
    }

    /// The notices that tell a process which saw the copy as this cursor
    /// holds it everything that came since: at most one per reason.
    private func whatChanged(to copy: StoreCopy, device: String) -> [ExternalChange] {
        var changes: [ExternalChange] = []
        var before = values
        let switched = account != nil && copy.account != account
        if switched {
            // Signed out (and perhaps into another account): every value it knew left.
            changes.append(ExternalChange(reason: .accountChange, keys: before.keys.sorted()))
            before = [:]
        }
        let changed = Set(before.keys).union(copy.values.keys).filter { key in
            guard copy.values[key] != before[key] else { return false }
            // A write this device made since is not external.
            if let stamp = copy.stamps[key], stamp.device == device, stamp.sequence >= nextSequence { return false }
            return true
        }.sorted()
        if copy.initialSyncDone && (!initialSyncDone || switched) {
            changes.append(ExternalChange(reason: .initialSyncChange, keys: changed))
        } else if !changed.isEmpty {
            changes.append(ExternalChange(reason: .serverChange, keys: changed))
        }
        let refused = copy.pending.filter { $0.value.overQuota && !overQuota.contains($0.value.stamp.sequence) }.keys.sorted()
        if !refused.isEmpty { changes.append(ExternalChange(reason: .quotaViolationChange, keys: refused)) }
        return changes
    }

    private static func overQuotaSequences(_ copy: StoreCopy) -> Set<Int64> {
        Set(copy.pending.values.filter(\.overQuota).map(\.stamp.sequence))
    }
}
