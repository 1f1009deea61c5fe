import CloudModel
import PropertyList

/// A reset: the cloud no longer has the history this copy followed (its data
/// deleted, restored from an older copy, a damaged file set aside, removals
/// forgotten; `StoreLineage`), as iCloud's server may lose a change token.
/// The copy takes the cloud's whole store, then gives back, as it holds them
/// and whoever wrote them, the writes the cloud lacks or has older ones of,
/// so nothing the cloud acknowledged before that a device still holds is lost.
extension StoreCopy {
    /// Starts this copy over from the cloud's whole store (`records`, every
    /// key's record up to `revision`, removals included). Returns the keys
    /// whose value changed (announced as a server change) and how many keys
    /// go back to the cloud.
    @discardableResult
    package mutating func reset(to records: [CloudRecord], revision newRevision: Int64, generation newGeneration: String?) -> (
        changed: [String], givingBack: Int
    ) {
        let cloud = Dictionary(records.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let changed = merge(records)
        revision = newRevision
        generation = newGeneration
        let first = !initialSyncDone
        initialSyncDone = true
        // Pending writes go up as they are; every other key held here the cloud lacks, or has a lower write of, is given back.
        restoring = Set(
            stamps.keys.filter { key in
                guard pending[key] == nil, let stamp = stamps[key] else { return false }
                guard let held = cloud[key] else { return true }
                return WriteOrder.precedes(held.stamp, held.value, stamp, values[key])
            })
        // A copy that never had its first download (only its own uploads moved it on) announces this one as such.
        if first {
            post(ExternalChange(reason: .initialSyncChange, keys: changed))
        } else if !changed.isEmpty {
            post(ExternalChange(reason: .serverChange, keys: changed))
        }
        return (changed, restoring.count)
    }

    /// What to give back to the cloud after a reset, with the stamps held here.
    package var restoreUploads: [UploadedChange] {
        restoring.sorted().compactMap { key in
            guard pending[key] == nil, let stamp = stamps[key] else { return nil }
            return UploadedChange(key: key, value: values[key], stamp: stamp)
        }
    }

    /// The cloud's answer to a restore: the keys it now keeps (or refused) are
    /// given back no more; the record it kept instead of what was given back
    /// is taken, whoever wrote what this copy held (the cloud takes another
    /// device's write back only where it has no record of the key).
    @discardableResult
    package mutating func restored(kept: [String], refused: [RefusedChange], superseded: [CloudRecord]) -> [String] {
        restoring.subtract(kept)
        restoring.subtract(refused.map(\.key))
        // Each record answers a key this copy gave back.
        return correct(superseded) { _ in true }
    }

    /// This device's own upload moved the store from `advanced.base` on: its
    /// records are here already, so the copy takes the new revision (and the
    /// generation that wrote it) when nothing else lies between.
    package mutating func advance(_ advanced: Advance?) {
        guard let advanced, advanced.base == revision else { return }
        revision = advanced.revision
        generation = advanced.generation
    }
}
