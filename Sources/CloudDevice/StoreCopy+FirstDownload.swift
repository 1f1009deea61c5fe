import CloudModel
import PropertyList

/// Writes made before a store's first download (docs/apple-traps.md): Apple
/// documents `NSUbiquitousKeyValueStoreInitialSyncChange` as the reason given
/// when an app writes a key while the initial download is in progress, the
/// local copy being made to match "the truth in iCloud". Such a write is held
/// (never uploaded) until the download comes; a key the download carries
/// takes the cloud's value, however new the local write, and is named in the
/// `initial-sync-change` notice. A key the cloud lacks keeps its write, which
/// then goes up (Apple says nothing of those).
extension StoreCopy {
    /// Drops every held write whose key `records` carry, and releases the
    /// others for upload; returns the keys whose held write was dropped.
    mutating func dropWritesBeforeFirstDownload(over records: [CloudRecord]) -> [String] {
        let carried = Set(records.map(\.key))
        var overwritten: [String] = []
        for (key, entry) in pending where entry.beforeFirstDownload {
            guard carried.contains(key) else {
                pending[key]?.beforeFirstDownload = false
                continue
            }
            pending[key] = nil
            // Forgotten, so the cloud's record (older by the clock) is taken by `merge`.
            setStamp(nil, forKey: key)
            overwritten.append(key)
        }
        return overwritten.sorted()
    }
}
