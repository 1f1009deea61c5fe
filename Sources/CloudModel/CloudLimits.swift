import PropertyList

/// The limits Apple documents for one app's iCloud key-value store, and how
/// this simulator measures them.
///
/// A key's size is its UTF-8 length; a value's size is the bytes of its
/// content: the UTF-8 of strings (and of dictionary keys), the bytes of data,
/// 8 for a number or a date, 1 for a boolean, summed through arrays and
/// dictionaries; the store's size is the sum of its values' sizes. Keys are
/// limited on their own (64 bytes each, 1024 of them) and not counted in the
/// 1 MB: Apple gives 1 MB both for the store and for one value, and says a
/// single value of 1 MB leaves no room for any other key, which holds only if
/// that value's key costs nothing. Apple does not say how it counts bytes, so
/// this measure is ours (docs/cloud.md); it costs no encoding, so every write
/// can check the whole store.
package enum CloudLimits {
    package static let maximumKeys = 1024
    package static let maximumStoreBytes = 1_048_576
    package static let maximumKeyBytes = 64
    package static let maximumValueBytes = 1_048_576
    /// How deep a value may nest: a device's copy and the cloud's account file
    /// hold a value four levels below their top, and a file holds at most
    /// `PlistLimits.maximumDepth` (512) levels. Ours, not Apple's.
    package static let maximumValueNesting = 500
    /// The largest sequence number, notice serial or revision a file or a
    /// message may hold: they count writes one at a time from 1, and 2⁵³
    /// writes never happen, so a bigger one is damage (a hand-edited or
    /// hostile file) and counting on from it can never overflow. It is also
    /// the largest integer every JSON reader keeps exact. Ours, not Apple's.
    package static let maximumCounter: Int64 = 1 << 53

    /// The removals a store keeps, in the cloud and in each device's copy. A
    /// removal is kept so that an older write arriving late (a device
    /// offline, a re-upload after a reset) cannot bring its key back, and so
    /// that devices learn of it; four times the keys a store may hold, so a
    /// store whose keys all churn still remembers its recent removals. Past
    /// it the oldest by stamp are forgotten, down to three quarters of it (so
    /// the sorting is paid once per thousand removals). Ours, not Apple's.
    package static let keptRemovals = 4 * maximumKeys

    /// How far ahead of the cloud's clock a write's stamp counts: one day,
    /// in milliseconds. Devices order writes by the writer's clock (a clock
    /// an hour fast wins, as `scenarios/cloud/skewed-clock-wins.yaml` shows),
    /// but Apple's servers order by their own clock, so a stamp years ahead
    /// must not pin its key for years: beyond this lead it is ordered as if
    /// stamped at the cloud's time plus the lead (`winningStamp`), and the
    /// writer is told the time its write is kept at. A day keeps every skew
    /// a device plausibly has (time zones set wrong, a clock set by hand)
    /// winning as it would by its clock. Ours, not Apple's (docs/cloud.md).
    package static let maximumStampLeadMilliseconds: Int64 = 86_400_000

    /// `stamp`, or the same write at `now` plus `maximumStampLeadMilliseconds`
    /// if it is further ahead: the stamp the cloud orders and keeps it by.
    package static func winningStamp(_ stamp: ChangeStamp, now: Int64) -> ChangeStamp {
        let latest = now.addingReportingOverflow(maximumStampLeadMilliseconds)
        guard !latest.overflow, stamp.time > latest.partialValue else { return stamp }
        return ChangeStamp(time: latest.partialValue, device: stamp.device, sequence: stamp.sequence)
    }

    /// Why `number`, read as the counter `name`, cannot be one (nil: it can).
    /// `lowest`: 0 for a revision (none yet), 1 for what counts from 1.
    /// `name` is built only for a counter that is wrong (a copy is checked on every transaction).
    package static func impossibleCounter(_ name: @autoclosure () -> String, _ number: Int64, lowest: Int64) -> String? {
        guard number < lowest || number > maximumCounter else { return nil }
        return "\(name()) is \(number), which no count of writes reaches (it must be from \(lowest) to \(maximumCounter))"
    }

    package static func size(ofKey key: String) -> Int { key.utf8.count }

    package static func size(of value: PlistValue) -> Int {
        switch value {
        case .string(let text): text.utf8.count
        case .data(let bytes): bytes.count
        case .integer, .real, .date: 8
        case .bool: 1
        case .array(let items): items.reduce(0) { $0 + size(of: $1) }
        case .dictionary(let entries): entries.reduce(0) { $0 + $1.key.utf8.count + size(of: $1.value) }
        }
    }

    /// Why a store holding `values` breaks a limit, naming the key whose
    /// write is being checked; nil when it is within every limit.
    package static func violation(of values: [String: PlistValue], writing key: String) -> String? {
        let total = values.values.reduce(0) { $0 + size(of: $1) }
        return violation(writing: key, values[key], storeKeys: values.count, storeBytes: total)
    }

    /// Why writing `value` (nil: a removal) for `key` breaks a limit, when
    /// the store would then hold `storeKeys` keys of `storeBytes` in all; nil
    /// when it is within every limit. Costs the size of the value only, so
    /// the cloud checks a long upload in time linear in its size.
    package static func violation(writing key: String, _ value: PlistValue?, storeKeys: Int, storeBytes: Int) -> String? {
        if size(ofKey: key) > maximumKeyBytes {
            return "key \(CloudFormatError.brief(key)) is \(size(ofKey: key)) bytes of UTF-8; a key may have at most \(maximumKeyBytes)"
        }
        if let value, value.nestingDepth(upTo: maximumValueNesting) > maximumValueNesting {
            return "the value of key \(CloudFormatError.brief(key)) nests arrays and dictionaries more than \(maximumValueNesting) deep"
        }
        if let value, size(of: value) > maximumValueBytes {
            return "the value of key \(CloudFormatError.brief(key)) is \(size(of: value)) bytes; a value may have at most \(maximumValueBytes)"
        }
        if storeKeys > maximumKeys {
            return "the store would hold \(storeKeys) keys; it may hold at most \(maximumKeys)"
        }
        if storeBytes > maximumStoreBytes {
            return "the store would hold \(storeBytes) bytes; it may hold at most \(maximumStoreBytes) (1 MB)"
        }
        return nil
    }
}
