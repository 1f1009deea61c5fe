import Foundation
import Guarded
import PropertyList
import Synchronization

/// A counter that moves on every change of what it guards, so a copy taken
/// earlier can tell it is out of date with one atomic load. The owner bumps
/// it after the change is in place (and before anyone is told of it): a
/// reader that sees the old number may have copied the new contents, which
/// costs one extra rebuild, never a stale read.
final class ContentVersion: Sendable {
    private let counter = Atomic<UInt64>(0)

    /// Moves after any version of the process moves (after that version):
    /// a snapshot found current when this read `n` (read before its sources'
    /// versions) stays current while this still reads `n`, so a cached read
    /// checks one number instead of every source's.
    private static let anyChange = Atomic<UInt64>(0)

    static var anyChangeCount: UInt64 { anyChange.load(ordering: .acquiring) }

    var current: UInt64 { counter.load(ordering: .acquiring) }

    /// Returns the new version.
    @discardableResult
    func bump() -> UInt64 {
        let made = counter.add(1, ordering: .releasing).newValue
        Self.anyChange.add(1, ordering: .releasing)
        return made
    }
}

/// One instance's whole search list merged into a single dictionary: each
/// key with its effective value and the domain that gives it. Reads look it
/// up under one uncontended lock, and the first read after any of its
/// sources changed builds a new one. It is immutable while shared: only the
/// instance's own `set` changes it (`applyOwnSet`), and only a copy no reader
/// holds (see `GroupDefaults.patchSnapshot`).
/// Unchecked Sendable: immutable while shared, as said above; its two `@exclusivity(unchecked)` variables change only in a copy no other thread holds.
final class SearchListSnapshot: @unchecked Sendable {
    struct Entry: Sendable {
        let value: PlistValue
        /// Index into `layerNames`.
        let layer: Int
    }

    // Unchecked: only `applyOwnSet` writes, on a snapshot no reader holds, so
    // the dynamic exclusivity check (a call on every read) guards nothing.
    @exclusivity(unchecked) private(set) var entries: [String: Entry]
    /// `entries`' ASCII keys and values, for `value(forKey:)`; not used once
    /// a set of a key that is not ASCII made it unsure (that key may equal an ASCII one).
    private let asciiKeys: ASCIIKeyTable
    @exclusivity(unchecked) private var asciiKeysUsable = true
    /// The search list's domain names, in search order.
    let layerNames: [String]
    /// Each layer's contents as read, in search order: what a removal reveals.
    /// The own domain's (index `ownLayer`) is not consulted once a set was applied.
    private let layers: [[String: PlistValue]]
    /// The persistent domains read (the own domain first, the managed domain
    /// last), with the version each had before it was read.
    @exclusivity(unchecked) private var domains: [(domain: PersistentDomain, version: UInt64)]
    private let processVersion: UInt64
    private let searchListVersion: UInt64
    /// The last `ContentVersion.anyChangeCount` at which this snapshot was
    /// found current (read before the check): while the count still reads
    /// this, no source moved since.
    private let currentAt: Atomic<UInt64>
    /// The whole view in the forms asked for (`representation`), each made
    /// once, by value type; under `representationsLock`. A snapshot's own
    /// set (on a copy no reader holds) empties it.
    private var representations: [ObjectIdentifier: Any] = [:]
    private let representationsLock = Locked()

    /// Where the instance's own domain is in the search list: right after the managed and argument domains.
    private static let ownLayer = 2

    /// Reads every source. Each version is taken before its source is read,
    /// so a change that lands during the build makes this snapshot out of date.
    /// `anyChange`: `ContentVersion.anyChangeCount`, read before `searchListVersion`.
    init(
        anyChange: UInt64, searchListVersion: UInt64, processDomains: ProcessDomains, managed: PersistentDomain, own: PersistentDomain,
        suites: [PersistentDomain], global: PersistentDomain
    ) {
        currentAt = Atomic(anyChange)
        self.searchListVersion = searchListVersion
        let volatile = processDomains.searchListLayers()
        processVersion = volatile.version
        let persistent = [own] + suites + [global]
        domains = (persistent + [managed]).map { ($0, $0.version.current) }
        let persistentLayers = persistent.map { (name: $0.name, contents: $0.snapshot()) }

        let layers =
            [(name: DomainName.managed, contents: managed.snapshot()), (name: DomainName.argument, contents: volatile.argument)]
            + persistentLayers + [
                (name: DomainName.languages, contents: volatile.languages),
                (name: DomainName.registration, contents: volatile.registration),
            ]
        layerNames = layers.map(\.name)
        self.layers = layers.map(\.contents)
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(layers.reduce(0) { $0 + $1.contents.count })
        // Lowest first, so each higher domain overwrites what it hides.
        for (index, layer) in layers.enumerated().reversed() {
            for (key, value) in layer.contents { entries[key] = Entry(value: value, layer: index) }
        }
        self.entries = entries
        asciiKeys = ASCIIKeyTable(entries.mapValues(\.value))
    }

    private init(copying other: SearchListSnapshot) {
        asciiKeys = other.asciiKeys.copy()
        asciiKeysUsable = other.asciiKeysUsable
        currentAt = Atomic(other.currentAt.load(ordering: .relaxed))
        entries = other.entries
        layerNames = other.layerNames
        layers = other.layers
        domains = other.domains
        processVersion = other.processVersion
        searchListVersion = other.searchListVersion
    }

    func copy() -> SearchListSnapshot { SearchListSnapshot(copying: self) }

    /// Whether no source moved since the snapshot was found current at
    /// `anyChange` (a `ContentVersion.anyChangeCount`): one load, no source visited.
    @inline(__always)
    func isCurrent(anyChange: UInt64) -> Bool { currentAt.load(ordering: .relaxed) == anyChange }

    /// Records that every source was found unchanged after `anyChange` was read.
    func markCurrent(at anyChange: UInt64) { currentAt.store(anyChange, ordering: .relaxed) }

    /// Whether no source changed since this snapshot read it (`exceptOwn`: but the own domain).
    func isCurrent(searchListVersion: UInt64, processDomains: ProcessDomains, exceptOwn: Bool = false) -> Bool {
        guard searchListVersion == self.searchListVersion, processDomains.version.current == processVersion else { return false }
        if !exceptOwn, domains[0].domain.version.current != domains[0].version { return false }
        for index in 1..<domains.count where domains[index].domain.version.current != domains[index].version { return false }
        return true
    }

    /// Brings the snapshot up to the own domain's `version`, made by a set of
    /// `key` to `value` (nil: removed), if the snapshot was at the version just
    /// before it; false (nothing changed) otherwise. One key's look-up in the
    /// other layers, instead of a rebuild. The caller holds the only reference.
    func applyOwnSet(_ value: PlistValue?, forKey key: String, version: UInt64) -> Bool {
        guard domains[0].version == version &- 1 else { return false }
        domains[0].version = version
        // A forced value or a launch argument hides the key whatever the own domain holds.
        if layers[..<Self.ownLayer].contains(where: { $0[key] != nil }) { return true }
        let entry = value.map { Entry(value: $0, layer: Self.ownLayer) } ?? lowerEntry(forKey: key)
        entries[key] = entry
        representations = [:]
        if asciiKeys.hash(key) == nil {
            asciiKeysUsable = false
        } else {
            asciiKeys.update(key, to: entry?.value)
        }
        return true
    }

    /// What a removal from the own domain reveals: the next lower domain's value.
    private func lowerEntry(forKey key: String) -> Entry? {
        for index in (Self.ownLayer + 1)..<layers.count {
            if let lower = layers[index][key] { return Entry(value: lower, layer: index) }
        }
        return nil
    }

    /// The effective value: one look-up in the ASCII table (a miss there is
    /// a miss unless the view has other keys), else in `entries`.
    @inline(__always)
    func value(forKey key: String) -> PlistValue? {
        if asciiKeysUsable, let hash = asciiKeys.hash(key) {
            if let found = asciiKeys.value(forKey: key, hash: hash) { return found }
            if !asciiKeys.hasOtherKeys { return nil }
        }
        return entries[key]?.value
    }

    /// The effective value if no source moved since the snapshot was found
    /// current at `anyChange`; `.none` if one may have.
    @inline(__always)
    func valueIfCurrent(forKey key: String, anyChange: UInt64) -> PlistValue?? {
        guard isCurrent(anyChange: anyChange) else { return .none }
        return .some(value(forKey: key))
    }

    /// Every effective key with its value in `Value`'s form, made by `make`
    /// from the plain values the first time it is asked for: later calls,
    /// until a source changes, return the same dictionary (a copy of a
    /// reference). One form per value type: the first `make` given for a
    /// type makes it. (`make` is the caller's own, concrete code: a generic
    /// conversion here would run unspecialized, at twice the cost.)
    func representation<Value>(_ make: ([String: PlistValue]) -> [String: Value]) -> [String: Value] {
        let form = ObjectIdentifier([String: Value].self)
        if let made = representationsLock.withLock({ representations[form] }) as? [String: Value] { return made }
        // Made outside the lock: two threads may both make it, and either result is the same view.
        let made = make(entries.mapValues(\.value))
        representationsLock.withLock { representations[form] = made }
        return made
    }

    func lookup(_ key: String) -> (value: PlistValue, domain: String)? {
        guard let entry = entries[key] else { return nil }
        return (entry.value, layerNames[entry.layer])
    }
}
