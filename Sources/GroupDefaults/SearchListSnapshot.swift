import PropertyList
import Synchronization

/// A counter that moves on every change of what it guards, so a copy taken
/// earlier can tell it is out of date with one atomic load. The owner bumps
/// it after the change is in place (and before anyone is told of it): a
/// reader that sees the old number may have copied the new contents, which
/// costs one extra rebuild, never a stale read.
final class ContentVersion: Sendable {
    private let counter = Atomic<UInt64>(0)

    var current: UInt64 { counter.load(ordering: .acquiring) }

    func bump() { counter.add(1, ordering: .releasing) }
}

/// One instance's whole search list merged into a single dictionary: each
/// key with its effective value and the domain that gives it. Immutable;
/// reads look it up under one uncontended lock, and the first read after
/// any of its sources changed builds a new one.
final class SearchListSnapshot: Sendable {
    struct Entry: Sendable {
        let value: PlistValue
        /// Index into `layerNames`.
        let layer: Int
    }

    let entries: [String: Entry]
    /// The search list's domain names, in search order.
    let layerNames: [String]
    /// The persistent domains read, with the version each had before it was read.
    private let domains: [(domain: PersistentDomain, version: UInt64)]
    private let processVersion: UInt64
    private let searchListVersion: UInt64

    /// Reads every source. Each version is taken before its source is read,
    /// so a change that lands during the build makes this snapshot out of date.
    init(searchListVersion: UInt64, processDomains: ProcessDomains, own: PersistentDomain, suites: [PersistentDomain], global: PersistentDomain) {
        self.searchListVersion = searchListVersion
        let volatile = processDomains.searchListLayers()
        processVersion = volatile.version
        let persistent = [own] + suites + [global]
        domains = persistent.map { ($0, $0.version.current) }
        let persistentLayers = persistent.map { (name: $0.name, contents: $0.snapshot()) }

        let layers = [(name: DomainName.argument, contents: volatile.argument)] + persistentLayers + [
            (name: DomainName.languages, contents: volatile.languages),
            (name: DomainName.registration, contents: volatile.registration),
        ]
        layerNames = layers.map(\.name)
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(layers.reduce(0) { $0 + $1.contents.count })
        // Lowest first, so each higher domain overwrites what it hides.
        for (index, layer) in layers.enumerated().reversed() {
            for (key, value) in layer.contents { entries[key] = Entry(value: value, layer: index) }
        }
        self.entries = entries
    }

    /// Whether no source changed since this snapshot read it.
    func isCurrent(searchListVersion: UInt64, processDomains: ProcessDomains) -> Bool {
        guard searchListVersion == self.searchListVersion, processDomains.version.current == processVersion else { return false }
        for (domain, version) in domains where domain.version.current != version { return false }
        return true
    }

    func lookup(_ key: String) -> (value: PlistValue, domain: String)? {
        guard let entry = entries[key] else { return nil }
        return (entry.value, layerNames[entry.layer])
    }
}
