import CloudClient
import CloudModel
import Foundation
import PropertyList

/// One store of one account in the cloud: its records (removals included),
/// its revision, which grows by one with every upload that changes it, and
/// the history those revisions belong to (`StoreLineage`). The live keys and
/// bytes are counted as records change, so checking a write against the
/// store's limits costs the size of the write, not of the store.
struct CloudStoreState: Sendable, Equatable {
    private(set) var revision: Int64 = 0
    private(set) var records: [String: CloudRecord] = [:]
    /// `records` as the store's file writes them, kept beside them: an upload
    /// writes the file again with every other record's dictionary as it was
    /// (not a thousand made anew for one changed key).
    private var recordFields: [String: PlistValue] = [:]
    private(set) var lineage = StoreLineage()
    /// The newest stamp of a removal no longer kept, but never later than the
    /// cloud's clock when it was forgotten: a write older than it, of a key
    /// the store has no record of, may be of a key removed since, and loses
    /// to that removal. Bounded by the clock so that removals stamped by a
    /// fast clock cannot make every new key of a correct clock lose to them.
    private(set) var horizon: ChangeStamp? = nil
    private(set) var liveKeys = 0
    private(set) var liveBytes = 0
    private(set) var removals = 0

    /// The removals a store keeps (`CloudLimits.keptRemovals`). Beyond it the
    /// oldest (by stamp) go: their newest stamp becomes `horizon` and their
    /// newest revision `lineage.forgotten` (a device behind it takes the
    /// whole store instead of the changes).
    static let keptRemovals = CloudLimits.keptRemovals

    /// The values the store holds now (removed keys left out).
    var values: [String: PlistValue] { records.compactMapValues(\.value) }

    func changes(since: Int64) -> [CloudRecord] {
        records.values.filter { $0.revision > since }.sorted { $0.key < $1.key }
    }

    /// How many keys and bytes the store would hold with `value` (nil: removed) in place of `key`'s record.
    func counts(writing key: String, _ value: PlistValue?) -> (keys: Int, bytes: Int) {
        var (keys, bytes) = (liveKeys, liveBytes)
        if let old = records[key]?.value {
            keys -= 1
            bytes -= CloudLimits.size(of: old)
        }
        if let value {
            keys += 1
            bytes += CloudLimits.size(of: value)
        }
        return (keys, bytes)
    }

    mutating func put(_ record: CloudRecord) {
        if let old = records[record.key] { count(old, as: -1) }
        records[record.key] = record
        recordFields[record.key] = record.plist
        count(record, as: 1)
    }

    private mutating func count(_ record: CloudRecord, as sign: Int) {
        guard let value = record.value else {
            removals += sign
            return
        }
        liveKeys += sign
        liveBytes += sign * CloudLimits.size(of: value)
    }

    /// The next revision, written by `generation`.
    mutating func advance(by generation: String) {
        revision += 1
        if lineage.generations.last?.id == generation {
            lineage.generations[lineage.generations.count - 1].through = revision
        } else {
            lineage.generations.append(StoreLineage.Generation(id: generation, through: revision))
            // A device on a generation dropped here takes the whole store again: harmless.
            if lineage.generations.count > 64 { lineage.generations.removeFirst(lineage.generations.count - 64) }
        }
    }

    /// A history that has reached the largest revision starts again: every
    /// record is renumbered to revision 1 of a history of its own (`id`), so
    /// the next upload counts on from there instead of past the largest
    /// revision every device accepts. Devices see a history they are not on,
    /// take the whole store and give back what it lacks (a reset).
    mutating func startOver(as id: String) {
        let kept = records.values
        records = [:]
        recordFields = [:]
        (liveKeys, liveBytes, removals) = (0, 0, 0)
        for record in kept { put(CloudRecord(key: record.key, value: record.value, stamp: record.stamp, revision: 1)) }
        revision = 1
        lineage = StoreLineage(generations: [StoreLineage.Generation(id: id, through: 1)], forgotten: 0)
    }

    /// Why a record of a store's file is one no upload could have made (a
    /// stamp further ahead of `now` than any clock may be: it would win every
    /// later write of its key), nil if none is: the cloud's own file is
    /// checked at load as an upload is.
    func impossibleRecord(now: Int64) -> String? {
        let latest = now.addingReportingOverflow(CloudTrust.maximumClockSkewMilliseconds)
        guard !latest.overflow, let record = records.values.first(where: { $0.stamp.time > latest.partialValue }) else { return nil }
        return "record \(CloudFormatError.name(record.key)) is stamped \(record.stamp.time) ms, more than "
            + "\(CloudTrust.maximumClockSkewMilliseconds) ms (the largest clock skew) ahead of the cloud's clock (\(now) ms)"
    }

    /// Drops the oldest removals beyond `keptRemovals`, down to three quarters
    /// of it (so the sorting is paid once per thousand removals, not per upload).
    /// `now`: the cloud's clock (ms since 1970), which the horizon never passes.
    mutating func forgetOldRemovals(now: Int64) {
        guard removals > Self.keptRemovals else { return }
        let oldest = records.values.filter { $0.value == nil }.sorted { $0.stamp < $1.stamp }.prefix(removals - Self.keptRemovals * 3 / 4)
        for record in oldest {
            records[record.key] = nil
            recordFields[record.key] = nil
            removals -= 1
            let bounded = Self.bounded(record.stamp, by: now)
            if horizon.map({ $0 < bounded }) ?? true { horizon = bounded }
            lineage.forgotten = max(lineage.forgotten, record.revision)
        }
    }

    /// `stamp`, or the same write's stamp at `now` if it is later: a removal
    /// no longer kept is known only by its horizon, and a horizon ahead of
    /// the cloud's clock would make every new key lose to a removal that is
    /// not there (docs/cloud.md, "Clocks").
    static func bounded(_ stamp: ChangeStamp, by now: Int64) -> ChangeStamp {
        stamp.time <= now ? stamp : ChangeStamp(time: now, device: stamp.device, sequence: stamp.sequence)
    }

    /// The horizon brought back to `now` if a file (of an older version, or
    /// edited) put it later; returns the horizon it had then, nil if unchanged.
    mutating func boundHorizon(by now: Int64) -> ChangeStamp? {
        guard let found = horizon, found.time > now else { return nil }
        horizon = Self.bounded(found, by: now)
        return found
    }

    init() {}

    var plist: [String: PlistValue] {
        var fields: [String: PlistValue] = [
            "revision": .integer(revision), "records": .dictionary(recordFields),
            "lineage": lineage.plist,
        ]
        if let horizon { fields["horizon"] = .dictionary(horizon.fields) }
        return fields
    }

    /// Reads a store's file (or an entry of an account file of the old
    /// layout, which has no lineage: its history is one generation).
    init(_ fields: [String: PlistValue], path: String) throws(CloudFormatError) {
        if fields.isEmpty { return }
        revision = try fields.revision("revision", at: path)
        for (key, entry) in try fields.dictionary("records", at: path) {
            let record = try CloudRecord(entry, at: "\(path) record \(CloudFormatError.name(key))")
            put(record)
            // A record of exactly the fields it writes, under its own key, is written back as read.
            if key == record.key, entry.dictionaryValue?.count == (record.value == nil ? 5 : 6) { recordFields[key] = entry }
        }
        if let entry = fields["lineage"] {
            lineage = try StoreLineage(entry, at: "\(path) lineage")
        } else if revision > 0 {
            lineage.generations = [StoreLineage.Generation(id: "before-generations", through: revision)]
        }
        if let entry = fields["horizon"] { horizon = try ChangeStamp(fields: try entry.fields(at: "\(path) horizon"), at: "\(path) horizon") }
    }
}
