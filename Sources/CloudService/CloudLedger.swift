import CloudModel
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles

/// One store of one account in the cloud: its records (removals included)
/// and its revision, which grows by one with every upload that changes it.
struct CloudStoreState: Sendable, Equatable {
    var revision: Int64 = 0
    var records: [String: CloudRecord] = [:]

    /// The values the store holds now (removed keys left out).
    var values: [String: PlistValue] { records.compactMapValues(\.value) }

    func changes(since: Int64) -> [CloudRecord] {
        records.values.filter { $0.revision > since }.sorted { $0.key < $1.key }
    }
}

/// The cloud's durable state and its rules: every account's stores, kept in
/// one file per account (`<data>/accounts/<account>.plist`), replaced
/// atomically and fsync'd before any change is acknowledged, so a kill -9
/// loses nothing the cloud said it had.
///
/// Not thread-safe: `CloudServer` owns it and calls it from one actor.
struct CloudLedger {
    let dataFolder: String
    private var accounts: [String: [String: CloudStoreState]] = [:]

    init(dataFolder: String) throws {
        self.dataFolder = dataFolder
        try createDirectories(dataFolder + "/accounts")
    }

    private func file(for account: String) throws -> SharedPlistFile {
        try DomainName.validate(account, what: "account name")
        return try SharedPlistFile(path: "\(dataFolder)/accounts/\(DomainName.fileStem(for: account)).plist", root: dataFolder)
    }

    /// The account's stores, read from disk the first time.
    mutating func stores(of account: String) throws -> [String: CloudStoreState] {
        if let known = accounts[account] { return known }
        let path = try file(for: account).path
        var stores: [String: CloudStoreState] = [:]
        for (identifier, entry) in try file(for: account).read() {
            let fields = try entry.fields(at: "\(path) store \(identifier)")
            // A revision no history reaches (checked here) would overflow when the next upload counts on from it.
            var state = CloudStoreState(revision: try fields.revision("revision", at: "\(path) store \(identifier)"))
            for (key, record) in try fields.dictionary("records", at: "\(path) store \(identifier)") {
                state.records[key] = try CloudRecord(record, at: "\(path) store \(identifier) record \(key)")
            }
            stores[identifier] = state
        }
        // An account is known once it holds something: looking one up (a typo in `cloud read --account`) makes none.
        if !stores.isEmpty { accounts[account] = stores }
        return stores
    }

    mutating func store(_ identifier: String, of account: String) throws -> CloudStoreState {
        try stores(of: account)[identifier] ?? CloudStoreState()
    }

    var knownAccounts: [String] {
        let onDisk = (try? FileManager.default.contentsOfDirectory(atPath: dataFolder + "/accounts")) ?? []
        let names = onDisk.filter { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }.compactMap { name in
            DomainName.domain(fromFileStem: String(name.dropLast(6)))
        }
        return Set(names).union(accounts.keys).sorted()
    }

    /// The outcome of one upload.
    struct UploadOutcome {
        var accepted: [Int64] = []
        var refused: [RefusedChange] = []
        /// For accepted changes older than what the store had: the record that won.
        var superseded: [CloudRecord] = []
        /// The records that changed, with the revision before and after; nil if none did.
        var push: (base: Int64, revision: Int64, records: [CloudRecord])?
    }

    /// Applies a device's changes to a store: per key, the change with the
    /// greater stamp wins (`ChangeStamp`'s order). A change already applied,
    /// or older than what the store has, is accepted and changes nothing,
    /// so a repeated or reordered upload is harmless. A change that would
    /// break a limit is refused. Durable before it returns.
    mutating func upload(_ changes: [UploadedChange], to identifier: String, of account: String, from device: String) throws -> UploadOutcome {
        var stores = try stores(of: account)
        var state = stores[identifier] ?? CloudStoreState()
        var outcome = UploadOutcome()
        var changed: [String: CloudRecord] = [:]
        let next = state.revision + 1
        for change in changes {
            guard change.stamp.isFrom(device) else {
                outcome.refused.append(RefusedChange(key: change.key, sequence: change.stamp.sequence,
                                                     reason: "the change is stamped by device \(change.stamp.device), not \(device)"))
                continue
            }
            if let current = state.records[change.key], change.stamp <= current.stamp {
                outcome.accepted.append(change.stamp.sequence)
                // The same change again changes nothing; an older one lost, and its writer must show the winner.
                if change.stamp != current.stamp { outcome.superseded.append(current) }
                continue
            }
            var values = state.values
            values[change.key] = change.value
            // A removal of a key no store may hold is refused too: no record is kept for it.
            let violation = change.value != nil ? CloudLimits.violation(of: values, writing: change.key)
                : CloudLimits.size(ofKey: change.key) > CloudLimits.maximumKeyBytes ? CloudLimits.violation(of: [:], writing: change.key) : nil
            if let violation {
                outcome.refused.append(RefusedChange(key: change.key, sequence: change.stamp.sequence, reason: violation))
                continue
            }
            let record = CloudRecord(key: change.key, value: change.value, stamp: change.stamp, revision: next)
            state.records[change.key] = record
            changed[change.key] = record
            outcome.accepted.append(change.stamp.sequence)
        }
        guard !changed.isEmpty else { return outcome }
        let base = state.revision
        state.revision = next
        stores[identifier] = state
        try save(stores, of: account)
        accounts[account] = stores
        outcome.push = (base, next, changed.values.sorted { $0.key < $1.key })
        return outcome
    }

    private func save(_ stores: [String: CloudStoreState], of account: String) throws {
        let contents: [String: PlistValue] = stores.mapValues { state in
            .dictionary(["revision": .integer(state.revision), "records": .dictionary(state.records.mapValues(\.plist))])
        }
        try file(for: account).update { $0 = contents }
    }
}
