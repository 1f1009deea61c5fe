import CloudClient
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import Guarded
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import PropertyList
import SharedFiles

/// Faults the cloud applies to one device's traffic (set through
/// `POST /v1/faults/<device>`; `groupsim cloud network` and the scenario
/// runner use it).
struct DeviceFaults: Sendable, Equatable {
    /// Messages both ways are lost (the device still believes it is connected).
    package var partitioned = false
    /// Added to every message both ways, in milliseconds.
    var latencyMilliseconds = 0
    /// The next so many pushes to the device are lost.
    package var dropPushes = 0
    /// The next so many pushes to the device are sent twice.
    package var duplicatePushes = 0

    package init() {}

    var plist: PlistValue {
        .dictionary([
            "partitioned": .bool(partitioned), "latencyMs": .integer(Int64(latencyMilliseconds)),
            "dropPushes": .integer(Int64(dropPushes)), "duplicatePushes": .integer(Int64(duplicatePushes)),
        ])
    }

    /// Applies the fields given in a request body, leaving the others as they are.
    mutating func update(from fields: [String: PlistValue]) throws(CloudFormatError) {
        for (name, value) in fields {
            switch (name, value) {
            case ("partitioned", .bool(let flag)): partitioned = flag
            case ("latencyMs", .integer(let ms)) where NetworkAction.latencyRange.contains(ms): latencyMilliseconds = Int(ms)
            case ("dropPushes", .integer(let count)) where NetworkAction.pushCountRange.contains(count): dropPushes = Int(count)
            case ("duplicatePushes", .integer(let count)) where NetworkAction.pushCountRange.contains(count): duplicatePushes = Int(count)
            default:
                throw CloudFormatError(
                    "fault \"\(name)\" = \(PlistJSON.encode(value)) is not one of partitioned (true/false), "
                        + "latencyMs (\(NetworkAction.latencyRange.lowerBound)–\(NetworkAction.latencyRange.upperBound)), "
                        + "dropPushes, duplicatePushes (\(NetworkAction.pushCountRange.lowerBound)–\(NetworkAction.pushCountRange.upperBound))")
            }
        }
    }
}

/// Counts per device, for reports and for proving that a change makes exactly one trip.
struct DeviceTraffic: Sendable, Equatable {
    package var uploadedChanges = 0
    package var appliedChanges = 0
    package var pushes = 0
    package var droppedPushes = 0
    package var duplicatedPushes = 0

    var plist: PlistValue {
        .dictionary([
            "uploadedChanges": .integer(Int64(uploadedChanges)), "appliedChanges": .integer(Int64(appliedChanges)),
            "pushes": .integer(Int64(pushes)), "droppedPushes": .integer(Int64(droppedPushes)),
            "duplicatedPushes": .integer(Int64(duplicatedPushes)),
        ])
    }
}

/// A frame on its way to a device, and when it may leave (added latency).
enum OutgoingFrame: Sendable {
    case text(String, notBefore: ContinuousClock.Instant)
    case pong(ByteBuffer)
}

/// The simulated iCloud: the ledger of every account's stores, the devices
/// connected over WebSocket, their faults, and the HTTP face. The actor owns
/// the sessions, faults and counters; each account's stores belong to an
/// `AccountBook`, whose file work runs on a queue of its own, so one
/// account's long upload (or a file lock another process holds) never holds
/// up another account. Each connection is a task that calls into the actor.
actor CloudServer {
    private let dataFolder: String
    private let top: String
    /// This run's generation (`StoreLineage`): every revision written by it carries this id.
    private let generation = UUID().uuidString.lowercased()
    /// Each account's book while the account is in use (a session of it, a
    /// request in its book) or holds a store: a made-up account costs nothing once its session ends.
    private var books: [String: AccountBook] = [:]
    /// The sessions and requests using each account's book: it is let go only when none is.
    private var bookUses: [String: Int] = [:]
    nonisolated let serverID: String
    private let started = Date()

    private struct Session {
        var device: String
        var account: String
        var outbox: DeviceOutbox
        /// The stores this connection was sent whole (from base 0): a reset
        /// (or a first download) the cloud announced, after which, and only
        /// after which, the device may give back what it holds (`restore`).
        var storesSentWhole: Set<String> = []
    }
    private var sessions: [Int: Session] = [:]
    private var nextSession = 0
    private var faults: [String: DeviceFaults] = [:]
    private var traffic: [String: DeviceTraffic] = [:]

    /// What the cloud does, as it does it (the CLI prints them as JSON lines).
    private let events: @Sendable (String, [String: PlistValue]) -> Void

    /// `top`: the folder the data folder's files are reached from through real folders only (see `CloudLedger`).
    package init(dataFolder: String, top: String? = nil, events: @escaping @Sendable (String, [String: PlistValue]) -> Void = { _, _ in }) throws {
        try createDirectories(dataFolder + "/accounts")
        self.dataFolder = dataFolder
        self.top = top ?? dataFolder
        self.events = events
        serverID = "groupsim-cloud-\(getpid())-\(Int(Date().timeIntervalSince1970))"
    }

    // MARK: Sessions

    func open(device: String, account: String, outbox: DeviceOutbox) throws -> Int {
        try DomainName.validate(device, what: "device name")
        try DomainName.validate(account, what: "account name")
        useBook(account)
        nextSession += 1
        events("connected", ["device": .string(device), "account": .string(account)])
        // A device has one agent: a newer connection replaces an older one.
        for (id, session) in sessions where session.device == device { close(id) }
        sessions[nextSession] = Session(device: device, account: account, outbox: outbox)
        return nextSession
    }

    func close(_ id: Int) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        session.outbox.finish()
        leaveBook(session.account)
    }

    func faults(of device: String) -> DeviceFaults { faults[device] ?? DeviceFaults() }

    /// The accounts' books held now (tests).
    var bookCount: Int { books.count }

    /// Runs `body` in the account's book, which is kept while it runs.
    private func inBook<T: Sendable>(_ account: String, _ body: @escaping @Sendable (inout CloudLedger) throws -> T) async throws -> T {
        let book = useBook(account)
        defer { leaveBook(account) }
        return try await book.run(body)
    }

    /// The account's book, made if there is none, counted as used until `leaveBook`.
    @discardableResult
    private func useBook(_ account: String) -> AccountBook {
        bookUses[account, default: 0] += 1
        if let known = books[account] { return known }
        let made = AccountBook(CloudLedger(dataFolder: dataFolder, top: top, generation: generation, report: events), account: account)
        books[account] = made
        return made
    }

    /// Once nothing uses a book, it is let go unless it holds a store (the
    /// files are the truth: the stores in memory only spare reading them again).
    /// No request runs in it then, so a book made again later is the only one.
    private func leaveBook(_ account: String) {
        let uses = (bookUses[account] ?? 1) - 1
        guard uses == 0 else {
            bookUses[account] = uses
            return
        }
        bookUses[account] = nil
        if books[account]?.holdsStores != true { books[account] = nil }
    }

    /// Handles one message of a connected device and answers it.
    func receive(_ message: AgentMessage, session id: Int) async throws {
        guard let session = sessions[id] else { return }
        let account = session.account
        switch message {
        case .hello:
            throw CloudFormatError("hello may only be the first message of a connection")
        case .subscribe(let store, let since):
            try await sendChanges(of: [store: since], to: id, onlyIfBehind: false)
        case .poll(let stores):
            try await sendChanges(of: stores, to: id, onlyIfBehind: true)
        case .upload(let store, let changes):
            if EventClock.isOn { events("upload-received", ["device": .string(session.device), "store": .string(store)]) }
            try DomainName.validate(store, what: "store identifier")
            traffic[session.device, default: DeviceTraffic()].uploadedChanges += changes.count
            let device = session.device
            let (acceptable, tooFarAhead) = CloudTrust.refusingFarFuture(changes, now: DeviceCloudSettings.realTime())
            var outcome = try await stored(store, of: session) { try $0.upload(acceptable, to: store, of: account, from: device) }
            outcome.refused += tooFarAhead
            // The other devices first: their apps are waiting for the change, the writer only for its ack.
            push(outcome, store: store, from: id, session: session)
            send(
                .ack(store: store, accepted: outcome.accepted, refused: outcome.refused, superseded: outcome.superseded, advanced: advance(outcome)),
                to: id, isPush: false)
            if !outcome.refused.isEmpty {
                events(
                    "refused",
                    [
                        "device": .string(device), "account": .string(account), "store": .string(store),
                        "keys": .array(outcome.refused.map { .string($0.key) }), "reason": .string(outcome.refused[0].reason),
                    ])
            }
        case .restore(let store, let records):
            // A device gives back what it holds after a reset: kept as it was, whoever wrote it (`CloudLedger.upload`).
            try DomainName.validate(store, what: "store identifier")
            traffic[session.device, default: DeviceTraffic()].uploadedChanges += records.count
            let device = session.device
            guard session.storesSentWhole.contains(store) else {
                // Not after a reset this connection announced: nothing is taken.
                let reason = "a restore is taken only after the cloud sent this connection the whole store (a reset): subscribe since 0 first"
                send(
                    .restored(
                        store: store, kept: [], refused: records.map { RefusedChange(key: $0.key, sequence: $0.stamp.sequence, reason: reason) },
                        superseded: [], advanced: nil), to: id, isPush: false)
                events("refused", ["device": .string(device), "account": .string(account), "store": .string(store), "reason": .string(reason)])
                return
            }
            // A stamp far in the future pins a key for ever, whoever gives it back.
            let (acceptable, tooFarAhead) = CloudTrust.refusingFarFuture(records, now: DeviceCloudSettings.realTime())
            var outcome = try await stored(store, of: session) { try $0.upload(acceptable, to: store, of: account, from: device, restoring: true) }
            outcome.refused += tooFarAhead
            send(
                .restored(store: store, kept: outcome.kept, refused: outcome.refused, superseded: outcome.superseded, advanced: advance(outcome)),
                to: id, isPush: false)
            events(
                "restored",
                [
                    "device": .string(device), "account": .string(account), "store": .string(store),
                    "given": .integer(Int64(records.count)), "taken": .integer(Int64(outcome.push?.records.count ?? 0)),
                    "refused": .integer(Int64(outcome.refused.count)),
                ])
            push(outcome, store: store, from: id, session: session)
        }
    }

    /// Runs an upload in the account's book; a store the cloud could not
    /// write (a full disk) is said in the log, and to the device as an error
    /// (its writes stay pending there and go up again later).
    private func stored(
        _ store: String, of session: Session,
        _ body: @escaping @Sendable (inout CloudLedger) throws -> CloudLedger.UploadOutcome
    ) async throws -> CloudLedger.UploadOutcome {
        do {
            return try await inBook(session.account, body)
        } catch {
            events(
                "write-failed",
                [
                    "device": .string(session.device), "account": .string(session.account), "store": .string(store),
                    "message": .string("\(error)"),
                ])
            throw CloudFormatError("the cloud could not store \(store): \(error); the changes stay pending on the device")
        }
    }

    private func advance(_ outcome: CloudLedger.UploadOutcome) -> Advance? {
        outcome.push.map { Advance(base: $0.base, revision: $0.revision, generation: generation) }
    }

    /// Sends what an upload changed to the account's other devices (even if
    /// the writer's connection ended while its upload was being stored).
    private func push(_ outcome: CloudLedger.UploadOutcome, store: String, from id: Int, session: Session) {
        guard let push = outcome.push else { return }
        traffic[session.device, default: DeviceTraffic()].appliedChanges += push.records.count
        let message = CloudMessage.changes(
            store: store, base: push.base, revision: push.revision, initial: false, records: push.records,
            lineage: push.lineage)
        // The writer has these records already: its ack moves its revision on.
        for (other, target) in sessions where other != id && target.account == session.account {
            // From base 0 a push holds the whole store: a device that sees a reset in it may give back what it holds.
            if push.base == 0 { sessions[other]?.storesSentWhole.insert(store) }
            send(message, to: other, isPush: true)
        }
        // Said once the pushes are on their way: the line costs time they need not wait for.
        events(
            "stored",
            [
                "device": .string(session.device), "account": .string(session.account), "store": .string(store),
                "revision": .integer(push.revision), "keys": .array(push.records.map { .string($0.key) }),
            ])
    }

    func greet(_ id: Int, stores: [String: Int64]) async throws {
        send(.welcome(server: serverID), to: id, isPush: false)
        try await sendChanges(of: stores, to: id, onlyIfBehind: false)
    }

    /// Every change after the given revision of each store (a device at
    /// revision 0 gets its first download); `onlyIfBehind`: only where the
    /// cloud's revision differs (a poll).
    private func sendChanges(of stores: [String: Int64], to id: Int, onlyIfBehind: Bool) async throws {
        guard let session = sessions[id] else { return }
        for store in stores.keys { try DomainName.validate(store, what: "store identifier") }
        let account = session.account
        let messages = try await inBook(account) { ledger in
            stores.sorted(by: { $0.key < $1.key }).compactMap { store, since -> CloudMessage? in
                do {
                    let state = try ledger.store(store, of: account)
                    if onlyIfBehind && state.revision == since { return nil }
                    // Behind forgotten removals, the records kept are not all the changes: the whole store goes.
                    let base = state.lineage.forgot(since: since) ? 0 : min(since, state.revision)
                    return .changes(
                        store: store, base: base, revision: state.revision, initial: since == 0, records: state.changes(since: base),
                        lineage: state.lineage)
                } catch {
                    // One store the cloud cannot read stops none of the others.
                    return .error("the cloud cannot read store \(store): \(error)")
                }
            }
        }
        for message in messages {
            if case .changes(let store, 0, _, _, _, _) = message { sessions[id]?.storesSentWhole.insert(store) }
            if case .error = message { send(message, to: id, isPush: false) } else { send(message, to: id, isPush: true) }
        }
    }

    private func send(_ message: CloudMessage, to id: Int, isPush: Bool) {
        guard let session = sessions[id] else { return }
        var fault = faults[session.device] ?? DeviceFaults()
        if fault.partitioned { return }
        var copies = 1
        if isPush {
            traffic[session.device, default: DeviceTraffic()].pushes += 1
            if fault.dropPushes > 0 {
                fault.dropPushes -= 1
                traffic[session.device, default: DeviceTraffic()].droppedPushes += 1
                copies = 0
            } else if fault.duplicatePushes > 0 {
                fault.duplicatePushes -= 1
                traffic[session.device, default: DeviceTraffic()].duplicatedPushes += 1
                copies = 2
            }
            faults[session.device] = fault == DeviceFaults() ? nil : fault
        }
        let text = SyncCodec.encode(message)
        let due = ContinuousClock.now + .milliseconds(fault.latencyMilliseconds)
        for _ in 0..<copies { session.outbox.yield(.text(text, notBefore: due)) }
    }

    // MARK: The HTTP face

    func setFaults(_ fields: [String: PlistValue], device: String) throws -> DeviceFaults {
        try DomainName.validate(device, what: "device name")
        var fault = faults[device] ?? DeviceFaults()
        try fault.update(from: fields)
        // A fault set back to none leaves the table, which holds at most so many devices.
        if fault == DeviceFaults() {
            faults[device] = nil
        } else {
            guard faults[device] != nil || faults.count < CloudTrust.maximumFaultedDevices else {
                throw CloudFormatError(
                    "faults are set for \(faults.count) devices, the most the cloud keeps; heal some first (POST /v1/faults/<device> with their defaults)"
                )
            }
            faults[device] = fault
        }
        return fault
    }

    func status() -> PlistValue {
        .dictionary([
            "server": .string(serverID), "pid": .integer(Int64(getpid())), "started": .date(started), "generation": .string(generation),
            "accounts": .array(Set(CloudLedger.accounts(in: dataFolder)).union(books.keys).sorted().map { .string($0) }),
            "connected": .array(
                sessions.values.sorted { $0.device < $1.device }.map {
                    .dictionary(["device": .string($0.device), "account": .string($0.account)])
                }),
            "faults": .dictionary(faults.mapValues(\.plist)),
            "traffic": .dictionary(traffic.mapValues(\.plist)),
        ])
    }

    /// Whether the account has files or a connected device; asking does not make it known.
    private func isKnown(_ account: String) -> Bool {
        books[account] != nil || CloudLedger.accounts(in: dataFolder).contains(account)
    }

    func account(_ name: String) async throws -> PlistValue {
        try DomainName.validate(name, what: "account name")
        guard isKnown(name) else { throw CloudServiceError.noAccount(name: name) }
        let stores = try await inBook(name) { try $0.stores(of: name) }
        return .dictionary(
            stores.mapValues { state in
                .dictionary(["revision": .integer(state.revision), "values": .dictionary(state.values)])
            })
    }

    func store(_ identifier: String, of account: String) async throws -> PlistValue {
        try DomainName.validate(account, what: "account name")
        guard isKnown(account) else { throw CloudServiceError.noAccount(name: account) }
        let found = try await inBook(account) { try $0.stores(of: account)[identifier] }
        guard let state = found else {
            throw CloudServiceError.noStore(identifier: identifier, account: account)
        }
        return .dictionary([
            "revision": .integer(state.revision), "lineage": state.lineage.plist,
            "records": .dictionary(
                state.records.mapValues { record in
                    var fields = record.plist.dictionaryValue ?? [:]
                    fields["key"] = nil
                    return .dictionary(fields)
                }),
        ])
    }
}

/// One account's stores (its `CloudLedger`), touched only on a serial
/// queue of the account's own: file reads, fsync'd writes and waits for a
/// file lock run there, off the threads that serve every connection.
/// Unchecked Sendable: `ledger` is touched only inside blocks on `queue`,
/// which is serial; `holding` is read and changed under `lock` only.
final class AccountBook: @unchecked Sendable {
    private var ledger: CloudLedger
    private let queue: DispatchQueue
    private let lock = Locked()
    private var holding = false

    /// Whether the ledger held a store after the last run.
    var holdsStores: Bool { lock.withLock { holding } }

    init(_ ledger: CloudLedger, account: String) {
        self.ledger = ledger
        queue = DispatchQueue(label: "groupsim.cloud.account.\(account)")
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (inout CloudLedger) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                let result = Result { try body(&self.ledger) }
                let holds = self.ledger.holdsStores
                self.lock.withLock { self.holding = holds }
                continuation.resume(with: result)
            }
        }
    }
}
