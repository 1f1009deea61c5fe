import CloudClient
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles

/// The cloud's durable state and its rules: every account's stores, one
/// file per store (`<data>/accounts/<account>/<store>.plist`), replaced
/// atomically and on disk (durable commits) before any change is
/// acknowledged, so neither a kill -9 nor a power loss loses anything the cloud said it had. A store is bounded (1024 live keys,
/// 1 MB, `CloudStoreState.keptRemovals` removals), so no file reaches the
/// file size limit through legal use, however many stores an account has.
///
/// A file that cannot be read at start (damaged, not the shape of a store)
/// is moved aside and the store starts empty, with a new history: devices
/// see a reset and give back what they hold (docs/cloud.md).
///
/// Not thread-safe: the cloud gives each account's one to an `AccountBook`,
/// which calls it from its own serial queue.
struct CloudLedger {
    let dataFolder: String
    private let top: String
    /// This run's generation: every revision written by it carries this id.
    let generation: String
    private var loaded: [String: [String: CloudStoreState]] = [:]
    /// Store files by path (`storeFile`).
    private var files: [String: SharedPlistFile] = [:]
    /// Accounts whose file of the old layout was looked for.
    private var migrated: Set<String> = []
    private let report: @Sendable (String, [String: PlistValue]) -> Void

    /// `generation`: this run's id (a new one when not given). `report`: what
    /// the cloud must tell whoever watches it (a file set aside, a layout migrated).
    /// `top`: the folder every file is reached from through real folders only
    /// (the simulation root), so a link swapped in for the data folder while
    /// the cloud runs is refused, not followed; `dataFolder` when not given.
    init(
        dataFolder: String, top: String? = nil, generation: String = UUID().uuidString.lowercased(),
        report: @escaping @Sendable (String, [String: PlistValue]) -> Void = { _, _ in }
    ) {
        self.dataFolder = dataFolder
        self.top = top ?? dataFolder
        self.generation = generation
        self.report = report
    }

    private var accountsFolder: String { dataFolder + "/accounts" }

    private func accountFolder(_ account: String) throws -> String {
        try DomainName.validate(account, what: "account name")
        return "\(accountsFolder)/\(try DomainName.fileStem(for: account))"
    }

    private func storePath(_ identifier: String, of account: String) throws -> String {
        try DomainName.validate(identifier, what: "store identifier")
        return "\(try accountFolder(account))/\(try DomainName.fileStem(for: identifier)).plist"
    }

    /// A store's file, made once: making one checks its folders and its lock
    /// file (making what is missing), which an upload need not pay for again
    /// (its `update` still checks the folders it goes through). Only for a
    /// store that is written, or whose file is set aside.
    private mutating func storeFile(_ identifier: String, of account: String) throws -> SharedPlistFile {
        let path = try storePath(identifier, of: account)
        if let known = files[path] { return known }
        let made = try SharedPlistFile(path: path, root: top)
        files[path] = made
        return made
    }

    /// One store, read from disk the first time it is found there. A store
    /// without a file (nothing was uploaded to it, or its name is made up) is
    /// empty, looked for again next time, and costs nothing lasting: no
    /// folder, no lock file, nothing kept in memory.
    mutating func store(_ identifier: String, of account: String) throws -> CloudStoreState {
        if let known = loaded[account]?[identifier] { return known }
        try migrateOldFile(of: account)
        let path = try storePath(identifier, of: account)
        var state: CloudStoreState
        do {
            guard let fields = try SharedPlistFile.read(path: path, root: top) else { return CloudStoreState() }
            state = try CloudStoreState(fields, path: path)
            if let problem = state.impossibleRecord(now: DeviceCloudSettings.realTime()) { throw CloudFormatError("\(path): \(problem)") }
        } catch let error as CloudFormatError {
            state = try setAside(storeFile(identifier, of: account), account: account, store: identifier, because: error.description)
        } catch SharedFileError.corrupt(_, let reason) {
            state = try setAside(storeFile(identifier, of: account), account: account, store: identifier, because: reason)
        } catch SharedFileError.fileTooLarge(_, let size, let limit) {
            state = try setAside(
                storeFile(identifier, of: account), account: account, store: identifier, because: "\(size) bytes, over the \(limit) a file may have")
        } catch SharedFileError.notARegularFile(_, let kind) {
            // Never followed nor opened: moved aside like a damaged file, so the store goes on syncing.
            state = try setAside(storeFile(identifier, of: account), account: account, store: identifier, because: "\(kind), not a regular file")
        }
        if let found = state.boundHorizon(by: DeviceCloudSettings.realTime()) {
            report(
                "horizon-bounded",
                [
                    "account": .string(account), "store": .string(identifier), "path": .string(path), "found": .string(found.description),
                    "now": .string(state.horizon?.description ?? ""),
                    "message": .string(
                        "the store's horizon was later than the cloud's clock; it is brought back to the clock, so new keys are not lost to it"),
                ])
        }
        loaded[account, default: [:]][identifier] = state
        return state
    }

    /// A store file the cloud cannot use: kept aside for inspection, named in
    /// the log; the store starts empty, and the devices fill it again.
    /// `startsEmpty` false: the cloud still holds the store in memory and writes it in the file's place.
    private func setAside(
        _ file: SharedPlistFile, account: String, store: String, because reason: String, startsEmpty: Bool = true
    ) throws -> CloudStoreState {
        let movedTo = try file.setAside()
        report(
            "damaged",
            [
                "account": .string(account), "store": .string(store), "path": .string(file.path), "reason": .string(reason),
                "movedTo": movedTo.map { .string($0) } ?? .string(""),
                "message": .string(
                    startsEmpty
                        ? "the store's file could not be read and was moved aside; the store starts empty and the devices give back what they hold"
                        : "the store's file was not a file and was moved aside; the store the cloud holds is written in its place"),
            ])
        return CloudStoreState()
    }

    /// The stores of an account (the identifiers of its files).
    mutating func stores(of account: String) throws -> [String: CloudStoreState] {
        try migrateOldFile(of: account)
        let folder = try accountFolder(account)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var identifiers = Set(
            names.filter { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }.compactMap {
                DomainName.domain(fromFileStem: String($0.dropLast(6)))
            })
        if let known = loaded[account]?.keys { identifiers.formUnion(known) }
        var result: [String: CloudStoreState] = [:]
        for identifier in identifiers { result[identifier] = try store(identifier, of: account) }
        return result
    }

    /// Whether a store was read from its file or written: what makes the ledger worth keeping between uses.
    var holdsStores: Bool { loaded.values.contains { !$0.isEmpty } }

    /// The stores and store files held in memory (tests: a name looked up and not found holds none).
    var cachedEntries: Int { loaded.values.reduce(0) { $0 + $1.count } + files.count }

    /// The accounts that hold something: looking one up (a typo in `cloud read --account`) makes none.
    var knownAccounts: [String] {
        let holding = loaded.filter { $0.value.values.contains { $0.revision > 0 } }.keys
        return Set(Self.accounts(in: dataFolder)).union(holding).sorted()
    }

    /// The accounts that have a folder (or a file of the old layout) in `dataFolder`.
    /// A folder counts once it holds a store's file (a look-up of an older version may have left an empty one).
    static func accounts(in dataFolder: String) -> [String] {
        let folder = dataFolder + "/accounts"
        let onDisk = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let names = onDisk.filter { !$0.hasPrefix(".") && !$0.contains(".corrupt-") }.compactMap { name -> String? in
            if name.hasSuffix(".plist") { return DomainName.domain(fromFileStem: String(name.dropLast(6))) }
            guard holdsStoreFile(folder + "/" + name) else { return nil }
            return DomainName.domain(fromFileStem: name)
        }
        return Set(names).sorted()
    }

    private static func holdsStoreFile(_ folder: String) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.contains { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }
    }

    /// The layout before one file per store kept an account's stores in
    /// `<data>/accounts/<account>.plist`: each of its stores is written to a
    /// file of its own (a store file already there wins: it was written
    /// since), then the old file is removed, or moved aside if a store in
    /// it could not be read.
    private mutating func migrateOldFile(of account: String) throws {
        guard !migrated.contains(account) else { return }
        let path = "\(accountsFolder)/\(try DomainName.fileStem(for: account)).plist"
        let contents: [String: PlistValue]
        do {
            guard let found = try SharedPlistFile.read(path: path, root: top) else {
                migrated.insert(account)
                return
            }
            contents = found
        } catch SharedFileError.corrupt(_, let reason) {
            try setAsideOldFile(path, account: account, because: reason)
            return
        } catch SharedFileError.fileTooLarge(_, let size, let limit) {
            try setAsideOldFile(path, account: account, because: "\(size) bytes, over the \(limit) a file may have")
            return
        }
        var unreadable: [String] = []
        for (identifier, entry) in contents.sorted(by: { $0.key < $1.key }) {
            let file = try storeFile(identifier, of: account)
            if FileManager.default.fileExists(atPath: file.path) { continue }
            do {
                let state = try CloudStoreState(try entry.fields(at: "\(path) store \(identifier)"), path: "\(path) store \(identifier)")
                try file.update { $0 = state.plist }
            } catch let error as CloudFormatError {
                unreadable.append(identifier)
                report(
                    "damaged",
                    [
                        "account": .string(account), "store": .string(identifier), "path": .string(path), "reason": .string(error.description),
                        "message": .string(
                            "this store of the old account file could not be read; it starts empty and the devices give back what they hold"),
                    ])
            }
        }
        let old = try SharedPlistFile(path: path, root: top)
        let keptAt = unreadable.isEmpty ? nil : try old.setAside()
        if unreadable.isEmpty { try old.remove() }
        report(
            "migrated",
            [
                "account": .string(account), "from": .string(path), "stores": .array(contents.keys.sorted().map { .string($0) }),
                "oldFileKeptAt": keptAt.map { .string($0) } ?? .string(""),
            ])
        migrated.insert(account)
    }

    private mutating func setAsideOldFile(_ path: String, account: String, because reason: String) throws {
        let movedTo = try SharedPlistFile(path: path, root: top).setAside()
        report(
            "damaged",
            [
                "account": .string(account), "path": .string(path), "reason": .string(reason), "movedTo": movedTo.map { .string($0) } ?? .string(""),
                "message": .string(
                    "the account's file could not be read and was moved aside; its stores start empty and the devices give back what they hold"),
            ])
        migrated.insert(account)
    }

    /// The outcome of one upload.
    struct UploadOutcome: Sendable {
        var accepted: [Int64] = []
        var refused: [RefusedChange] = []
        /// For accepted changes that lost to what the store had: the record that won.
        var superseded: [CloudRecord] = []
        /// The keys whose change is now kept (applied, or lost to a newer record in `superseded`).
        var kept: [String] = []
        /// The records that changed, with the revision before and after; nil if none did.
        var push: (base: Int64, revision: Int64, records: [CloudRecord], lineage: StoreLineage)?
    }

    /// Applies a device's changes to a store: per key, the greater write
    /// wins (`WriteOrder`: the stamp, then the value). A change already
    /// applied, or lower than what the store has, is accepted and changes
    /// nothing (the winner is returned in `superseded` when it differs), so
    /// a repeated or reordered upload is harmless. A change that would break
    /// a limit, or that the store's file cannot take, is refused. Durable
    /// before it returns. Costs time linear in the changes' size (plus one
    /// write of the store's file, which is bounded).
    ///
    /// `restoring`: the records a device gives back after a reset, which may
    /// carry any device's stamp; an upload's must carry the uploader's. One
    /// stamped by another device is taken only for a key the store has no
    /// record of (what the reset lost): it never replaces a record the store
    /// has, which that device gives back itself if it holds a newer one, so
    /// no device can rewrite or remove another's key under its stamp.
    /// `now`: the cloud's clock in ms since 1970, which bounds the horizon.
    mutating func upload(
        _ changes: [UploadedChange], to identifier: String, of account: String, from device: String, restoring: Bool = false,
        now: Int64 = DeviceCloudSettings.realTime()
    ) throws -> UploadOutcome {
        var state = try store(identifier, of: account)
        if state.revision >= CloudLimits.maximumCounter {
            let had = state.revision
            state.startOver(as: "\(generation)-after-\(had)")
            report(
                "history-restarted",
                [
                    "account": .string(account), "store": .string(identifier), "had": .integer(had),
                    "message": .string("the store's revision reached the largest one devices accept; its history starts again, and devices reset"),
                ])
        }
        var outcome = UploadOutcome()
        var changed: [String: CloudRecord] = [:]
        let next = state.revision + 1
        for change in changes {
            if let record = Self.apply(change, to: &state, revision: next, from: device, restoring: restoring, now: now, outcome: &outcome) {
                changed[change.key] = record
            }
        }
        guard !changed.isEmpty else { return outcome }
        let base = state.revision
        state.advance(by: generation)
        state.forgetOldRemovals(now: now)
        do {
            try write(state, to: identifier, of: account)
        } catch SharedFileError.contentsTooLarge(_, let size, let limit) {
            // Within every limit, yet too large a file (values whose count is
            // far below their encoding): refused once, with the reason, never retried.
            let reason = "the store's file would be \(size) bytes, over the \(limit) the cloud writes; the change is not kept"
            Self.refuse(changes, writing: Set(changed.keys), to: state, reason: reason, outcome: &outcome)
            return outcome
        }
        loaded[account, default: [:]][identifier] = state
        outcome.push = (base, next, changed.values.sorted { $0.key < $1.key }, state.lineage)
        return outcome
    }

    /// Writes a store's file whole. What the cloud holds in memory is the
    /// store (only the cloud writes its files): something other than a file
    /// swapped in at the name (a FIFO, a link) is moved aside, said as a
    /// damaged file is, and the store written in its place, instead of
    /// failing every upload of the store for ever.
    private mutating func write(_ state: CloudStoreState, to identifier: String, of account: String) throws {
        let file = try storeFile(identifier, of: account)
        do {
            try file.update { $0 = state.plist }
        } catch SharedFileError.notARegularFile(_, let kind) {
            _ = try setAside(file, account: account, store: identifier, because: "\(kind), not a regular file", startsEmpty: false)
            try file.update { $0 = state.plist }
        }
    }

    /// One uploaded change against the store: refused (another device's
    /// stamp, over a limit), kept as it is (the store has it or a later
    /// write), or put at `revision`, whose record is returned.
    private static func apply(
        _ change: UploadedChange, to state: inout CloudStoreState, revision: Int64, from device: String, restoring: Bool, now: Int64,
        outcome: inout UploadOutcome
    ) -> CloudRecord? {
        guard restoring || change.stamp.isFrom(device) else {
            outcome.refused.append(
                RefusedChange(
                    key: change.key, sequence: change.stamp.sequence,
                    reason: "the change is stamped by device \(change.stamp.device), not \(device)"))
            return nil
        }
        // Ordered by its stamp, but never as further ahead of the cloud's clock than a stamp may win by.
        let stamp = CloudLimits.winningStamp(change.stamp, now: now)
        if restoring, !change.stamp.isFrom(device), let current = state.records[change.key] {
            // Another device's write given back where the store has a record: the store keeps its record, and the giver takes it.
            outcome.accepted.append(change.stamp.sequence)
            outcome.kept.append(change.key)
            if !WriteOrder.same(current.stamp, current.value, change.stamp, change.value) { outcome.superseded.append(current) }
            return nil
        }
        if let current = state.records[change.key], Self.isKept(change, as: current) {
            // This write is the record already (kept earlier, perhaps at a bounded time): its writer takes the record's stamp.
            outcome.accepted.append(change.stamp.sequence)
            outcome.kept.append(change.key)
            if current.stamp != change.stamp { outcome.superseded.append(current) }
            return nil
        }
        if let current = state.records[change.key], !WriteOrder.precedes(current.stamp, current.value, stamp, change.value) {
            outcome.accepted.append(change.stamp.sequence)
            outcome.kept.append(change.key)
            // The same change again changes nothing; a lower one lost, and its writer must show the winner.
            if !WriteOrder.same(current.stamp, current.value, stamp, change.value) { outcome.superseded.append(current) }
            return nil
        }
        if state.records[change.key] == nil, let horizon = state.horizon, stamp <= horizon {
            // Older than a removal the store no longer remembers, which may have been of this key.
            outcome.accepted.append(change.stamp.sequence)
            outcome.kept.append(change.key)
            if change.value != nil {
                outcome.superseded.append(CloudRecord(key: change.key, value: nil, stamp: horizon, revision: state.revision))
            }
            return nil
        }
        let counts = state.counts(writing: change.key, change.value)
        if let violation = CloudLimits.violation(writing: change.key, change.value, storeKeys: counts.keys, storeBytes: counts.bytes) {
            outcome.refused.append(RefusedChange(key: change.key, sequence: change.stamp.sequence, reason: violation))
            return nil
        }
        let record = CloudRecord(key: change.key, value: change.value, stamp: stamp, revision: revision)
        state.put(record)
        outcome.accepted.append(change.stamp.sequence)
        outcome.kept.append(change.key)
        // Kept at a bounded time: the writer must hold the write at the time the cloud and every other device order it by.
        if stamp != change.stamp { outcome.superseded.append(record) }
        return record
    }

    /// Whether `change` is the write `record` holds: the same device,
    /// sequence and value, at the record's time or later (the cloud may
    /// have kept it at a bounded time, `CloudLimits.winningStamp`).
    private static func isKept(_ change: UploadedChange, as record: CloudRecord) -> Bool {
        record.stamp.isFrom(change.stamp.device) && record.stamp.sequence == change.stamp.sequence && record.value == change.value
            && record.stamp.time <= change.stamp.time
    }

    /// The changes that wrote `keys` (as `state` holds them) refused with `reason` after all.
    private static func refuse(
        _ changes: [UploadedChange], writing keys: Set<String>, to state: CloudStoreState, reason: String, outcome: inout UploadOutcome
    ) {
        let refusedChanges = changes.filter { keys.contains($0.key) && state.records[$0.key]?.stamp == $0.stamp }
        outcome.refused += refusedChanges.map { RefusedChange(key: $0.key, sequence: $0.stamp.sequence, reason: reason) }
        let refusedSequences = Set(refusedChanges.map(\.stamp.sequence))
        outcome.accepted.removeAll { refusedSequences.contains($0) }
        outcome.kept.removeAll { keys.contains($0) }
    }
}
