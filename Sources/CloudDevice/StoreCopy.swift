import CloudModel
import PropertyList

/// A device's copy of one iCloud key-value store, as kept in its file
/// (`devices/<device>/cloud/stores/<identifier>.plist`). Pure: the app
/// processes and the device's sync agent change it inside a transaction of
/// the file, so every change here is atomic across the device's processes.
///
/// - `values`: what the apps see;
/// - `pending`: the local writes not yet accepted by the cloud, one per key
///   (a newer write of the key replaces the older one, as only the last
///   value matters to a last-writer-wins store);
/// - `revision`: how far this copy has got in the cloud's history of the store;
/// - `notices`: the last external-change notifications, for every process of
///   the app on the device to post.
package struct StoreCopy: Sendable, Equatable {
    package struct Pending: Sendable, Equatable {
        /// Always the key's entry in `values` (nil: removed); the file keeps
        /// it there only, so a big value is stored once.
        package var value: PlistValue?
        package var stamp: ChangeStamp
        /// Over a limit: kept on the device, never uploaded.
        package var overQuota: Bool
        /// Made while signed in, before the store's first download: not
        /// uploaded until it comes, and overwritten by the cloud's value of
        /// the key if it has one (`StoreCopy+FirstDownload.swift`).
        package var beforeFirstDownload = false
    }

    package struct Notice: Sendable, Equatable {
        package var serial: Int64
        package var change: ExternalChange
    }

    /// The account whose values these are; nil when none is signed in.
    package var account: String?
    package var values: [String: PlistValue] = [:]
    /// The write each value (or removal) came from, so an older record that
    /// arrives after a newer one never wins: the copy ends the same whatever
    /// order records come in. Changed through `setStamp` only.
    package private(set) var stamps: [String: ChangeStamp] = [:]
    /// `stamps` as the file writes them, kept beside them: a copy read from its
    /// file and written back hands over the dictionaries it read for every
    /// stamp that did not change (no rebuilding a thousand, and a comparison
    /// with the file's finds them the same at once).
    private var stampFields: [String: PlistValue] = [:]
    package var pending: [String: Pending] = [:]
    package var revision: Int64 = 0
    /// The cloud's generation that wrote `revision` (`StoreLineage`); nil before the first.
    package var generation: String?
    /// Keys this device gives back to the cloud after a reset, as it holds them (`StoreCopy+Reset.swift`).
    package var restoring: Set<String> = []
    /// Whether the first download for `account` has arrived (InitialSyncChange posted).
    package var initialSyncDone = false
    package var nextSequence: Int64 = 1
    package var notices: [Notice] = []
    /// The serial of the newest notice (notices are never all dropped, only the oldest).
    package var lastNoticeSerial: Int64 { notices.last?.serial ?? 0 }

    /// Notices kept for processes that were busy when they were posted.
    package static let keptNotices = 32

    package init() {}

    // MARK: Local writes (the app processes)

    /// Sets (nil: removes) a key now, on this device, queued for upload. A
    /// write that breaks a limit stays on the device, is never uploaded, and
    /// posts QuotaViolationChange for the key (what iCloud does). Returns the
    /// limit broken, if any.
    @discardableResult
    /// `heldForFirstDownload`: the device is signed in and iCloud's rule for
    /// writes made before the first download applies (the device's setting).
    package mutating func write(
        _ value: PlistValue?, forKey key: String, device: String, time: Int64, heldForFirstDownload: Bool = false
    ) -> String? {
        if values[key] == value && pending[key] == nil { return nil }
        values[key] = value
        let stamp = ChangeStamp(time: time, device: device, sequence: nextSequence)
        nextSequence += 1
        setStamp(stamp, forKey: key)
        // A key too long for any store never reached the cloud: its removal stays here.
        if value == nil && CloudLimits.size(ofKey: key) > CloudLimits.maximumKeyBytes {
            pending[key] = nil
            return nil
        }
        // Measured against what can go up: values already over quota stay on the device and do not count.
        let counted = values.filter { $0.key == key || pending[$0.key]?.overQuota != true }
        let violation = value == nil ? nil : CloudLimits.violation(of: counted, writing: key)
        pending[key] = Pending(
            value: value, stamp: stamp, overQuota: violation != nil, beforeFirstDownload: heldForFirstDownload && !initialSyncDone)
        if violation != nil { post(ExternalChange(reason: .quotaViolationChange, keys: [key])) }
        return violation
    }

    /// What the agent should upload: pending writes within the limits, oldest first.
    package var uploads: [UploadedChange] {
        pending.filter { !$0.value.overQuota && !($0.value.beforeFirstDownload && !initialSyncDone) }
            .map { UploadedChange(key: $0.key, value: $0.value.value, stamp: $0.value.stamp) }
            .sorted { $0.stamp.sequence < $1.stamp.sequence }
    }

    // MARK: The agent

    /// The cloud accepted these writes: they are no longer pending (unless
    /// the key was written again since).
    package mutating func acknowledge(_ sequences: [Int64]) {
        let accepted = Set(sequences)
        pending = pending.filter { !accepted.contains($0.value.stamp.sequence) }
        forgetOldRemovals()
    }

    /// How many removals the copy remembers (their stamps, kept so an older
    /// record of the key is not taken and a reset can give them back).
    package var removalCount: Int { stamps.count - values.count }

    /// Forgets the oldest removals (by stamp) beyond `CloudLimits.keptRemovals`,
    /// as the cloud does, so a flood of removals cannot grow the copy (and
    /// every write of every process, which reads and writes it whole)
    /// without end: 320,000 removals made a copy of 48 MB and an app's write
    /// of 1.7 s. A pending removal is kept until the cloud has it. Nothing
    /// is lost by forgetting: a record reaches a copy only at a revision
    /// after the copy's (`SyncAgent.apply`), and the cloud, which orders
    /// every write, forgets its removals at the same bound.
    mutating func forgetOldRemovals() {
        guard removalCount > CloudLimits.keptRemovals else { return }
        let forgettable = stamps.filter { values[$0.key] == nil && pending[$0.key] == nil }.sorted { $0.value < $1.value }
        for (key, _) in forgettable.prefix(removalCount - CloudLimits.keptRemovals * 3 / 4) { setStamp(nil, forKey: key) }
    }

    /// The cloud refused these writes (a limit another device's writes
    /// reached first): they stay local and never go up.
    package mutating func refuse(_ refused: [RefusedChange]) {
        var keys: [String] = []
        for item in refused {
            guard var entry = pending[item.key], entry.stamp.sequence == item.sequence else { continue }
            entry.overQuota = true
            pending[item.key] = entry
            keys.append(item.key)
        }
        if !keys.isEmpty { post(ExternalChange(reason: .quotaViolationChange, keys: keys.sorted())) }
    }

    /// Applies records from the cloud. A key with a newer local write
    /// pending keeps it (the cloud will take it too: both sides order writes
    /// the same way); an older pending write lost and is dropped. Posts
    /// ServerChange (InitialSyncChange for the first download) with the keys
    /// whose value this device did not already have. Returns those keys.
    @discardableResult
    package mutating func apply(_ records: [CloudRecord], revision newRevision: Int64, initial: Bool) -> [String] {
        let overwritten = initial && !initialSyncDone ? dropWritesBeforeFirstDownload(over: records) : []
        let changed = Array(Set(merge(records)).union(overwritten)).sorted()
        revision = max(revision, newRevision)
        if initial && !initialSyncDone {
            initialSyncDone = true
            // Posted even when the download is empty: it is how an app learns
            // that the first sync is over and its own values may go up.
            post(ExternalChange(reason: .initialSyncChange, keys: changed))
        } else if !changed.isEmpty {
            post(ExternalChange(reason: .serverChange, keys: changed))
        }
        return changed
    }

    /// The records that won over this device's own uploads (the cloud had a
    /// newer write, or kept this device's write at a bounded time,
    /// `CloudLimits.winningStamp`): shown here at once, announced as a
    /// server change. `device`: this device; the cloud's verdict stands over
    /// what this copy holds of that device's own writes, so a write kept at
    /// a time earlier than its writer's clock gave it is ordered here as
    /// everywhere else.
    @discardableResult
    package mutating func correct(_ records: [CloudRecord], device: String? = nil) -> [String] {
        correct(records) { held in device.map { held.isFrom($0) } ?? false }
    }

    /// `records` as the cloud's verdict over what this copy holds where
    /// `overrides` says so of the stamp it holds (see `merge`).
    mutating func correct(_ records: [CloudRecord], overrides: (ChangeStamp) -> Bool) -> [String] {
        let changed = merge(records, verdictOver: overrides)
        if !changed.isEmpty { post(ExternalChange(reason: .serverChange, keys: changed)) }
        return changed
    }

    /// Takes each record unless a greater local write of its key is pending
    /// (a lower pending write lost, and goes); returns the keys whose value
    /// changed, sorted. Writes compare by `WriteOrder`, as in the cloud.
    /// `verdictOver`: whether a record replaces the settled write this copy
    /// holds (its stamp given) whatever their order here: the cloud's answer
    /// to this device's upload or give-back, which the cloud ordered.
    mutating func merge(_ records: [CloudRecord], verdictOver overrides: (ChangeStamp) -> Bool = { _ in false }) -> [String] {
        var changed: [String] = []
        for record in records {
            if let local = pending[record.key] {
                if WriteOrder.precedes(record.stamp, record.value, local.stamp, local.value) { continue }
                pending[record.key] = nil
                // The cloud echoing this device's own write: nothing new to show.
                if WriteOrder.same(record.stamp, record.value, local.stamp, local.value) { continue }
            }
            if let known = stamps[record.key], !WriteOrder.precedes(known, values[record.key], record.stamp, record.value) {
                guard overrides(known), known != record.stamp else { continue }
            }
            setStamp(record.stamp, forKey: record.key)
            if values[record.key] != record.value {
                values[record.key] = record.value
                changed.append(record.key)
            }
        }
        forgetOldRemovals()
        return changed.sorted()
    }

    /// Signs the copy into `newAccount` (nil: out). Leaving an account takes
    /// its values off the device (AccountChange with their keys); values
    /// written with no account stay, pending, to be reconciled at sign-in.
    package mutating func switchAccount(to newAccount: String?) {
        guard newAccount != account else { return }
        let leaving = account != nil
        var removed: [String] = []
        if leaving {
            removed = values.keys.sorted()
            values = [:]
            stamps = [:]
            stampFields = [:]
            pending = [:]
        }
        account = newAccount
        revision = 0
        generation = nil
        restoring = []
        initialSyncDone = false
        if leaving { post(ExternalChange(reason: .accountChange, keys: removed)) }
    }

    /// The one way a stamp changes: `stampFields` changes with it.
    mutating func setStamp(_ stamp: ChangeStamp?, forKey key: String) {
        stamps[key] = stamp
        stampFields[key] = stamp.map { .dictionary($0.fields) }
    }

    mutating func post(_ change: ExternalChange) {
        notices.append(Notice(serial: lastNoticeSerial + 1, change: change))
        if notices.count > Self.keptNotices { notices.removeFirst(notices.count - Self.keptNotices) }
    }

    // MARK: The file

    package var plist: [String: PlistValue] {
        var fields: [String: PlistValue] = [
            "values": .dictionary(values), "revision": .integer(revision),
            "stamps": .dictionary(stampFields), "initialSyncDone": .bool(initialSyncDone),
            "nextSequence": .integer(nextSequence),
            "pending": .dictionary(
                pending.mapValues { entry in
                    // No value: it is the key's entry in `values`.
                    .dictionary(
                        [
                            "time": .integer(entry.stamp.time), "device": .string(entry.stamp.device),
                            "sequence": .integer(entry.stamp.sequence), "overQuota": .bool(entry.overQuota),
                        ].merging(entry.beforeFirstDownload ? ["beforeFirstDownload": .bool(true)] : [:]) { $1 })
                }),
            "notices": .array(
                notices.map { notice in
                    .dictionary([
                        "serial": .integer(notice.serial), "reason": .string(notice.change.reason.rawValue),
                        "keys": .array(notice.change.keys.map { .string($0) }),
                    ])
                }),
        ]
        if let account { fields["account"] = .string(account) }
        if let generation { fields["generation"] = .string(generation) }
        if !restoring.isEmpty { fields["restoring"] = .array(restoring.sorted().map { .string($0) }) }
        return fields
    }

    /// Why the file's fields hold a counter this copy can never have reached
    /// (nil: they do not). Such a file is damaged: it is kept aside like a
    /// corrupt one and the copy starts again (`DeviceCloud.storeDomain`),
    /// so counting on from it (`nextSequence`, notice serials) never overflows.
    package static func impossibleNumber(in fields: [String: PlistValue]) -> String? {
        if case .integer(let number)? = fields["nextSequence"], let problem = CloudLimits.impossibleCounter("nextSequence", number, lowest: 1) {
            return problem
        }
        if case .integer(let number)? = fields["revision"], let problem = CloudLimits.impossibleCounter("revision", number, lowest: 0) {
            return problem
        }
        guard case .array(let notices)? = fields["notices"] else { return nil }
        for (index, notice) in notices.enumerated() {
            if case .integer(let number)? = notice.dictionaryValue?["serial"],
                let problem = CloudLimits.impossibleCounter("notices[\(index)].serial", number, lowest: 1)
            {
                return problem
            }
        }
        return nil
    }

    /// Reads a copy from its file's dictionary (empty: a new copy). `path` names the file in errors.
    package init(_ fields: [String: PlistValue], path: String) throws(CloudFormatError) {
        if fields.isEmpty { return }
        if let problem = Self.impossibleNumber(in: fields) { throw CloudFormatError("\(path): \(problem)") }
        if let account = fields["account"] {
            guard case .string(let name) = account else { throw CloudFormatError("\(path): account must be a string") }
            self.account = name
        }
        values = try fields.dictionary("values", at: path)
        let stampEntries = try fields.dictionary("stamps", at: path)
        stamps.reserveCapacity(stampEntries.count)
        stampFields = stampEntries
        for (key, entry) in stampEntries {
            let entryFields = try entry.fields(at: "\(path) stamps.\(key)")
            let stamp = try ChangeStamp(fields: entryFields, at: "\(path) stamps.\(key)")
            stamps[key] = stamp
            // Only a stamp of exactly its three fields is written back as read (anything else, as the stamp writes it).
            if entryFields.count != 3 { stampFields[key] = .dictionary(stamp.fields) }
        }
        revision = fields["revision"] == nil ? 0 : try fields.integer("revision", at: path)
        initialSyncDone = try fields.bool("initialSyncDone", at: path, default: false)
        if fields["generation"] != nil { generation = try fields.string("generation", at: path) }
        for (index, key) in try fields.array("restoring", at: path).enumerated() {
            guard case .string(let name) = key else { throw CloudFormatError("\(path) restoring[\(index)] must be a string") }
            restoring.insert(name)
        }
        nextSequence = fields["nextSequence"] == nil ? 1 : try fields.integer("nextSequence", at: path)
        for (key, entry) in try fields.dictionary("pending", at: path) {
            let item = try entry.fields(at: "\(path) pending.\(key)")
            // The pending value is the key's current value (a "value" field
            // that files written before kept beside it is not read).
            pending[key] = Pending(
                value: values[key], stamp: try ChangeStamp(fields: item, at: "\(path) pending.\(key)"),
                overQuota: try item.bool("overQuota", at: "\(path) pending.\(key)", default: false),
                beforeFirstDownload: try item.bool("beforeFirstDownload", at: "\(path) pending.\(key)", default: false))
        }
        for (index, entry) in try fields.array("notices", at: path).enumerated() {
            let noticePath = { "\(path) notices[\(index)]" }
            let item = try entry.fields(at: noticePath())
            guard let reason = ExternalChangeReason(rawValue: try item.string("reason", at: noticePath())) else {
                throw CloudFormatError(
                    "\(noticePath()).reason is not one of \(ExternalChangeReason.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let keys = try item.array("keys", at: noticePath()).enumerated().map { index, key throws(CloudFormatError) in
                guard case .string(let name) = key else { throw CloudFormatError("\(noticePath()).keys[\(index)] must be a string") }
                return name
            }
            notices.append(Notice(serial: try item.integer("serial", at: noticePath()), change: ExternalChange(reason: reason, keys: keys)))
        }
    }
}
