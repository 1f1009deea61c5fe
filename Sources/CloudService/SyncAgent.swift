import CloudClient
import CloudDevice
import CloudModel
import DeviceState
import Foundation
import GroupDefaults
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import PropertyList

/// A device's sync daemon: uploads its apps' writes to the cloud, applies
/// what the cloud pushes to the device's copies (and so to its apps), and
/// carries out sign-in, sign-out and account switches. Offline writes wait
/// in the copies' `pending` and go up on reconnection; an upload not
/// acknowledged within a second is sent again, and every second the agent
/// asks for what it may have missed, so a lost, repeated or reordered message
/// costs time, never a change (docs/cloud.md).
///
/// The actor owns the device's state in this process; the copies' files are
/// shared with the device's app processes through transactions. It runs on
/// a thread of its own: its file work (a transaction's wait for a copy's
/// lock, held by an app for up to the lock timeout; the fsync'd writes)
/// blocks that thread, never one of the cooperative pool's.
package actor SyncAgent {
    package let cloud: DeviceCloud
    private let executor = OwnThreadExecutor(name: "groupsim.sync-agent")
    package nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let wakeup = Wakeup()
    private let settingsDomain: PersistentDomain
    private var stores: [String: PersistentDomain] = [:]
    /// Uploads sent and not yet acknowledged: store → sequence → when sent.
    private var inFlight: [String: [Int64: ContinuousClock.Instant]] = [:]
    /// The cloud's last error message, so one repeated on every retry is reported once.
    private var lastCloudError: String?
    /// Restores (what a copy gives back after a reset) sent and not yet answered: store → when sent.
    private var restoresInFlight: [String: ContinuousClock.Instant] = [:]
    /// Stores this connection has received whole (from base 0), and those it
    /// asked for so: the cloud takes a `restore` only after it sent the store
    /// whole on the same connection (a reset it announced), so what is left
    /// to give back after a reconnect waits for the whole store again.
    private var storesReceivedWhole: Set<String> = []
    private var storesAskedWhole: [String: ContinuousClock.Instant] = [:]
    private let events: @Sendable (String, [String: PlistValue]) -> Void
    /// Each copy as last read or written: a copy is parsed again only once
    /// its domain's view is another dictionary (the loop looks at every copy
    /// several times per wake-up), and the agent's own commit never is.
    private var parsedCopies = ParsedStoreCopies()
    /// The settings' problems said last, so a field that stays wrong is said once.
    private var reportedSettingsProblems: Set<String> = []
    /// The last problem reported for each store's copy, so a copy that stays malformed is reported once.
    private var reportedProblems: [String: String] = [:]
    /// Upload throttling (`UploadThrottle`): when each store last went up, and what is held.
    private var throttle = UploadThrottle()
    /// Stores the throttle held back: when one goes up, its file is read first (`uploadPending`).
    private var heldStores: Set<String> = []
    /// The device's time, which the upload interval counts on: an advanced clock lets a held upload go at once.
    private let time: DeviceTime

    /// How long an unacknowledged upload waits before it is sent again, and how often the agent polls.
    static let retryInterval = Duration.seconds(1)

    /// `events`: what the agent does, as it does it (the CLI prints them as JSON lines).
    package init(cloud: DeviceCloud, events: @escaping @Sendable (String, [String: PlistValue]) -> Void) throws {
        self.cloud = cloud
        self.events = events
        settingsDomain = try cloud.settingsDomain()
        settingsDomain.addListener { [wakeup] _ in wakeup.signal() }
        time = try DeviceTime(clock: DeviceClock(root: cloud.root, device: cloud.device)) { [wakeup] in wakeup.signal() }
    }

    /// The settings from the file (its domain only wakes the agent): a file
    /// that cannot be read throws, so the agent waits for it to be fixed
    /// rather than take its account for none and sign the device out.
    /// A number it ignores is said once per distinct problem.
    private func settings() throws -> DeviceCloudSettings {
        let current = try cloud.readSettings()
        for problem in current.problems where !reportedSettingsProblems.contains(problem) {
            events("problem", ["message": .string(problem)])
        }
        reportedSettingsProblems = Set(current.problems)
        return current
    }

    /// Runs until cancelled.
    package func run() async {
        var lastProblem: String? = nil
        while !Task.isCancelled {
            do {
                let current = try settings()
                try prepareStores(current)
                guard current.online, let account = current.account,
                    let address = try current.server ?? ServerLocation.read(root: cloud.root)?.address
                else {
                    await wakeup.wait(timeout: .milliseconds(250))
                    continue
                }
                let channel = try await connect(address)
                lastProblem = nil
                events("connected", ["account": .string(account), "server": .string(address.url)])
                try await session(channel, account: account)
                events("disconnected", [:])
            } catch {
                let problem = "\(error)"
                if problem != lastProblem { events("problem", ["message": .string(problem)]) }
                lastProblem = problem
            }
            await wakeup.wait(timeout: .milliseconds(200))
        }
    }

    /// Opens the stores the apps registered and brings each copy to the device's account.
    private func prepareStores(_ current: DeviceCloudSettings) throws {
        for identifier in current.stores where stores[identifier] == nil {
            let domain = try cloud.storeDomain(identifier)
            domain.addListener { [wakeup] _ in wakeup.signal() }
            stores[identifier] = domain
        }
        for (identifier, domain) in stores {
            guard let copy = readable(identifier), copy.account != current.account else { continue }
            try domain.transaction { fields in
                var copy = try parsedCopies.copy(of: fields, store: identifier, path: domain.file.path)
                copy.switchAccount(to: current.account)
                fields = copy.plist
                parsedCopies.wrote(copy, as: fields, store: identifier)
            }
            inFlight[identifier] = nil
            events("account", ["store": .string(identifier), "account": current.account.map { .string($0) } ?? .string("none")])
        }
    }

    // MARK: The connection

    private func connect(_ address: CloudAddress) async throws -> NIOAsyncChannel<WebSocketFrame, WebSocketFrame> {
        // Read (or made) on every attempt: erasing the device makes it a new secret.
        let secret = try cloud.secretFile().readOrCreate()
        return try await SyncConnection.open(address, device: cloud.device, secret: secret)
    }

    private func session(_ channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, account: String) async throws {
        inFlight = [:]
        restoresInFlight = [:]
        storesReceivedWhole = []
        storesAskedWhole = [:]
        try await channel.executeThenClose { inbound, outbound in
            let writer = MessageWriter(outbound: outbound)
            try await writer.send(.hello(device: cloud.device, account: account, stores: revisions()))
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Both tasks prefer the agent's thread: a frame read, or a
                // wake-up, then reaches the actor without a stop on the
                // cooperative pool's threads (one thread switch less each way).
                group.addTask(executorPreference: executor) {
                    for try await frame in inbound {
                        switch frame.opcode {
                        case .text: try await self.handle(String(buffer: frame.unmaskedData), account: account, writer: writer)
                        case .connectionClose:
                            // The cloud says why it closed (a device that fell behind); the agent reconnects and resyncs.
                            var data = frame.unmaskedData
                            _ = data.readInteger(as: UInt16.self)
                            if let reason = data.readString(length: data.readableBytes), !reason.isEmpty {
                                self.events("closed-by-cloud", ["reason": .string(reason)])
                            }
                            return
                        default: continue
                        }
                    }
                }
                group.addTask(executorPreference: executor) { try await self.drive(account: account, writer: writer) }
                try await group.next()
                group.cancelAll()
                wakeup.signal()
            }
        }
    }

    /// The revision of every copy that can be read (a malformed one is left out, and reported).
    private func revisions() -> [String: Int64] {
        var result: [String: Int64] = [:]
        for identifier in stores.keys { result[identifier] = readable(identifier)?.revision }
        return result
    }

    /// A store's copy as it is now; nil, reported once, while it is malformed
    /// (another tool's doing), so one bad copy never stops the others syncing.
    private func readable(_ identifier: String) -> StoreCopy? {
        guard let domain = stores[identifier] else { return nil }
        do {
            let copy = try parsedCopies.copy(of: domain.snapshot(), store: identifier, path: domain.file.path)
            reportedProblems[identifier] = nil
            return copy
        } catch {
            let problem = "\(error); the store \(identifier) is not synced until the file is fixed or removed"
            if reportedProblems[identifier] != problem { events("problem", ["store": .string(identifier), "message": .string(problem)]) }
            reportedProblems[identifier] = problem
            return nil
        }
    }

    /// Uploads what is pending, re-sends what was not acknowledged, polls;
    /// returns when the device goes offline or changes account.
    private func drive(account: String, writer: MessageWriter) async throws {
        var lastPoll = ContinuousClock.now
        while !Task.isCancelled {
            let current = try settings()
            guard current.online, current.account == account else { return }
            let known = Set(stores.keys)
            try prepareStores(current)
            for identifier in Set(stores.keys).subtracting(known) {
                guard let copy = readable(identifier) else { continue }
                try await writer.send(.subscribe(store: identifier, since: copy.revision))
            }
            if ContinuousClock.now - lastPoll >= Self.retryInterval {
                lastPoll = .now
                for (store, sent) in inFlight { inFlight[store] = sent.filter { ContinuousClock.now - $0.value < Self.retryInterval } }
                restoresInFlight = restoresInFlight.filter { ContinuousClock.now - $0.value < Self.retryInterval }
                try await writer.send(.poll(stores: revisions()))
                // A first download that never came (a push lost on the way)
                // is asked for again: a poll at revision 0 of a store the
                // cloud has nothing for gets no answer, and the apps would
                // wait for InitialSyncChange for ever.
                for identifier in stores.keys.sorted() {
                    guard let copy = readable(identifier), copy.account == account, !copy.initialSyncDone else { continue }
                    try await writer.send(.subscribe(store: identifier, since: 0))
                }
            }
            let reopens = try await uploadPending(account: account, interval: current.uploadIntervalMilliseconds, writer: writer)
            // A held store is looked at again when its window opens, not a retry interval later
            // (or at once when the device's clock is advanced: its file's change wakes the loop).
            await wakeup.wait(timeout: min(Self.retryInterval, reopens ?? Self.retryInterval))
            if EventClock.isOn { events("woke", [:]) }
        }
    }

    /// Sends what is pending (each store at most once per `interval` ms);
    /// returns how long until a store held back may go up, if one is.
    private func uploadPending(account: String, interval: Int64, writer: MessageWriter) async throws -> Duration? {
        var reopens: Duration?
        for identifier in stores.keys.sorted() {
            guard var copy = readable(identifier), copy.account == account else { continue }
            var sending = copy.uploads.filter { inFlight[identifier]?[$0.stamp.sequence] == nil }
            guard !sending.isEmpty else { continue }
            let now = time.now(events: events)
            if let wait = throttle.hold(identifier, interval: interval, changes: sending.count, now: now, events: events) {
                heldStores.insert(identifier)
                reopens = min(reopens ?? wait, wait)
                continue
            }
            if heldStores.remove(identifier) != nil {
                // A held store goes up with every write made while it was held: one the watcher has not told of yet
                // (the device's clock advanced right after it) would otherwise wait a whole interval more.
                stores[identifier]?.reloadFromDisk()
                guard let fresh = readable(identifier), fresh.account == account else { continue }
                copy = fresh
                sending = copy.uploads.filter { inFlight[identifier]?[$0.stamp.sequence] == nil }
            }
            for change in sending { inFlight[identifier, default: [:]][change.stamp.sequence] = .now }
            var fields: [String: PlistValue] = [
                "store": .string(identifier), "keys": .array(sending.map { .string($0.key) }),
                "stamps": .array(sending.map { .string($0.stamp.description) }),
            ]
            if let writes = throttle.sent(identifier, nextSequence: copy.nextSequence, now: now) { fields["writes"] = .integer(writes) }
            // Said once sent: the line costs time the upload need not wait for.
            try await writer.send(.upload(store: identifier, changes: sending))
            events("upload", fields)
        }
        for identifier in stores.keys.sorted() where restoresInFlight[identifier] == nil {
            guard let copy = readable(identifier), copy.account == account else { continue }
            let giving = copy.restoreUploads
            guard !giving.isEmpty else { continue }
            guard storesReceivedWhole.contains(identifier) else {
                // Asked again after the retry interval: the answer may have been lost on the way.
                if storesAskedWhole[identifier].map({ ContinuousClock.now - $0 >= Self.retryInterval }) ?? true {
                    storesAskedWhole[identifier] = .now
                    try await writer.send(.subscribe(store: identifier, since: 0))
                }
                continue
            }
            restoresInFlight[identifier] = .now
            events("restore", ["store": .string(identifier), "keys": .array(giving.map { .string($0.key) })])
            try await writer.send(.restore(store: identifier, records: giving))
        }
        return reopens
    }

    private func handle(_ text: String, account: String, writer: MessageWriter) async throws {
        let message = try SyncCodec.decodeCloudMessage(text)
        switch message {
        case .welcome:
            break
        case .error(let problem):
            // The same error again (a retry that meets the same full disk) is said once.
            if problem != lastCloudError { events("cloud-error", ["message": .string(problem)]) }
            lastCloudError = problem
        case .ack(let store, let accepted, let refused, let superseded, let advanced):
            try acknowledged(store, accepted: accepted, refused: refused, superseded: superseded, advanced: advanced, account: account)
        case .restored(let store, let kept, let refused, let superseded, let advanced):
            try restored(store, kept: kept, refused: refused, superseded: superseded, advanced: advanced, account: account)
        case .changes(let store, let base, let revision, let initial, let records, let lineage):
            if EventClock.isOn { events("push-received", ["store": .string(store), "revision": .integer(revision)]) }
            try await apply(
                store, base: base, revision: revision, initial: initial, records: records, lineage: lineage,
                account: account, writer: writer)
        }
    }

    /// The cloud's answer to an upload: settled changes leave `pending`, refused and superseded ones are corrected.
    private func acknowledged(
        _ store: String, accepted: [Int64], refused: [RefusedChange], superseded: [CloudRecord],
        advanced: Advance?, account: String
    ) throws {
        guard let domain = stores[store], readable(store) != nil else { return }
        let corrected = try domain.transaction { fields -> [String] in
            var copy = try parsedCopies.copy(of: fields, store: store, path: domain.file.path)
            guard copy.account == account else { return [] }
            copy.acknowledge(accepted)
            copy.refuse(refused)
            let corrected = copy.correct(superseded, device: cloud.device)
            copy.advance(advanced)
            fields = copy.plist
            parsedCopies.wrote(copy, as: fields, store: store)
            return corrected
        }
        if !corrected.isEmpty { events("superseded", ["store": .string(store), "keys": .array(corrected.map { .string($0) })]) }
        for sequence in accepted + refused.map(\.sequence) { inFlight[store]?[sequence] = nil }
        events("acknowledged", ["store": .string(store), "sequences": .array(accepted.map { .integer($0) })])
        if !refused.isEmpty { events("refused", ["store": .string(store), "keys": .array(refused.map { .string($0.key) })]) }
    }

    /// The cloud's answer to a restore (what a reset copy gave back).
    private func restored(
        _ store: String, kept: [String], refused: [RefusedChange], superseded: [CloudRecord],
        advanced: Advance?, account: String
    ) throws {
        guard let domain = stores[store], readable(store) != nil else { return }
        let corrected = try domain.transaction { fields -> [String] in
            var copy = try parsedCopies.copy(of: fields, store: store, path: domain.file.path)
            guard copy.account == account else { return [] }
            let corrected = copy.restored(kept: kept, refused: refused, superseded: superseded)
            copy.advance(advanced)
            fields = copy.plist
            parsedCopies.wrote(copy, as: fields, store: store)
            return corrected
        }
        restoresInFlight[store] = nil
        events(
            "restored",
            [
                "store": .string(store), "keys": .array(kept.map { .string($0) }),
                "superseded": .array(corrected.map { .string($0) }),
            ])
        if !refused.isEmpty {
            events("refused", ["store": .string(store), "keys": .array(refused.map { .string($0.key) }), "reason": .string(refused[0].reason)])
        }
    }

    /// A push or a download: applied to the copy, or a reset when the cloud lost the copy's history,
    /// or asked for again from where the copy is when one was lost on the way.
    private func apply(
        _ store: String, base: Int64, revision: Int64, initial: Bool, records: [CloudRecord], lineage: StoreLineage?,
        account: String, writer: MessageWriter
    ) async throws {
        guard let domain = stores[store], readable(store) != nil else { return }
        if base == 0 { storesReceivedWhole.insert(store) }
        // `gap`: ask again from there (a push lost; or 0, the cloud's history lost, `historyLost`).
        let outcome = try domain.transaction { fields -> (gap: Int64?, changed: [String]?, historyLost: Bool) in
            var copy = try parsedCopies.copy(of: fields, store: store, path: domain.file.path)
            guard copy.account == account else { return (nil, nil, false) }
            // Not on the cloud's history, or sent the whole store because removals it had were forgotten: a reset.
            if let lineage,
                !lineage.continues(revision: copy.revision, generation: copy.generation)
                    || (base == 0 && lineage.forgot(since: copy.revision))
            {
                // The cloud lost the history this copy followed: start over from its whole store.
                guard base == 0 else {
                    events(
                        "history-lost",
                        [
                            "store": .string(store), "have": .integer(copy.revision), "cloud": .integer(revision),
                            "message": .string("the cloud no longer has the revisions this device had; asking for its whole store"),
                        ])
                    return (0, nil, true)
                }
                let had = copy.revision
                let reset = copy.reset(to: records, revision: revision, generation: lineage.current)
                fields = copy.plist
                parsedCopies.wrote(copy, as: fields, store: store)
                events(
                    "cloud-reset",
                    [
                        "store": .string(store), "had": .integer(had), "cloud": .integer(revision),
                        "keys": .array(reset.changed.map { .string($0) }), "givingBack": .integer(Int64(reset.givingBack)),
                        "message": .string(
                            "the cloud no longer has the revisions this device had; its whole store was taken, and what it lacks is given back"),
                    ])
                return (nil, reset.changed, false)
            }
            // A push that starts after what this copy has: one was lost; ask again from here.
            if base > copy.revision { return (copy.revision, nil, false) }
            // Everything since revision 0 is a whole first download, whatever the cloud called it.
            let first = !copy.initialSyncDone && (initial || base == 0)
            guard revision > copy.revision || first else { return (nil, nil, false) }
            let fresh = records.filter { $0.revision > copy.revision }
            let changed = copy.apply(fresh, revision: revision, initial: first)
            if copy.revision == revision, let lineage { copy.generation = lineage.current }
            fields = copy.plist
            parsedCopies.wrote(copy, as: fields, store: store)
            return (nil, changed, false)
        }
        if let since = outcome.gap {
            if !outcome.historyLost { events("gap", ["store": .string(store), "have": .integer(since), "got": .integer(base)]) }
            try await writer.send(.subscribe(store: store, since: since))
        } else if let changed = outcome.changed {
            events(
                "applied",
                [
                    "store": .string(store), "revision": .integer(revision), "initial": .bool(initial),
                    "keys": .array(changed.map { .string($0) }),
                ])
        }
    }
}

/// Sends agent messages as masked text frames (a client's frames must be masked).
struct MessageWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>

    func send(_ message: AgentMessage) async throws {
        let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: ByteBuffer(string: SyncCodec.encode(message)))
        try await outbound.write(frame)
    }
}
