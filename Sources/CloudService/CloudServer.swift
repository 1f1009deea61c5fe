import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import PropertyList
import SharedFiles

/// Faults the cloud applies to one device's traffic (set through
/// `POST /v1/faults/<device>`; `groupsim cloud network` and the scenario
/// runner use it).
public struct DeviceFaults: Sendable, Equatable {
    /// Messages both ways are lost (the device still believes it is connected).
    public var partitioned = false
    /// Added to every message both ways, in milliseconds.
    public var latencyMilliseconds = 0
    /// The next so many pushes to the device are lost.
    public var dropPushes = 0
    /// The next so many pushes to the device are sent twice.
    public var duplicatePushes = 0

    public init() {}

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
            case ("latencyMs", .integer(let ms)) where (0...600_000).contains(ms): latencyMilliseconds = Int(ms)
            case ("dropPushes", .integer(let count)) where (0...1_000_000).contains(count): dropPushes = Int(count)
            case ("duplicatePushes", .integer(let count)) where (0...1_000_000).contains(count): duplicatePushes = Int(count)
            default:
                throw CloudFormatError("fault \"\(name)\" = \(PlistJSON.encode(value)) is not one of partitioned (true/false), "
                    + "latencyMs (0–600000), dropPushes, duplicatePushes (0–1000000)")
            }
        }
    }
}

/// Counts per device, for reports and for proving that a change makes exactly one trip.
public struct DeviceTraffic: Sendable, Equatable {
    public var uploadedChanges = 0
    public var appliedChanges = 0
    public var pushes = 0
    public var droppedPushes = 0
    public var duplicatedPushes = 0

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
/// connected over WebSocket, their faults, and the HTTP face. One actor owns
/// all of it; each connection is a task that calls into it.
public actor CloudServer {
    private var ledger: CloudLedger
    public nonisolated let serverID: String
    private let started = Date()

    private struct Session {
        var device: String
        var account: String
        var outbox: DeviceOutbox
    }
    private var sessions: [Int: Session] = [:]
    private var nextSession = 0
    private var faults: [String: DeviceFaults] = [:]
    private var traffic: [String: DeviceTraffic] = [:]

    /// What the cloud does, as it does it (the CLI prints them as JSON lines).
    private let events: @Sendable (String, [String: PlistValue]) -> Void

    public init(dataFolder: String, events: @escaping @Sendable (String, [String: PlistValue]) -> Void = { _, _ in }) throws {
        ledger = try CloudLedger(dataFolder: dataFolder)
        self.events = events
        serverID = "groupsim-cloud-\(getpid())-\(Int(Date().timeIntervalSince1970))"
    }

    // MARK: Sessions

    func open(device: String, account: String, outbox: DeviceOutbox) throws -> Int {
        try DomainName.validate(device, what: "device name")
        try DomainName.validate(account, what: "account name")
        _ = try ledger.stores(of: account)
        nextSession += 1
        events("connected", ["device": .string(device), "account": .string(account)])
        // A device has one agent: a newer connection replaces an older one.
        for (id, session) in sessions where session.device == device {
            session.outbox.finish()
            sessions[id] = nil
        }
        sessions[nextSession] = Session(device: device, account: account, outbox: outbox)
        return nextSession
    }

    func close(_ id: Int) {
        sessions[id]?.outbox.finish()
        sessions[id] = nil
    }

    func faults(of device: String) -> DeviceFaults { faults[device] ?? DeviceFaults() }

    /// Handles one message of a connected device and answers it.
    func receive(_ message: AgentMessage, session id: Int) throws {
        guard let session = sessions[id] else { return }
        switch message {
        case .hello:
            throw CloudFormatError("hello may only be the first message of a connection")
        case .subscribe(let store, let since):
            try sendChanges(store: store, since: since, to: id)
        case .poll(let stores):
            for (store, revision) in stores.sorted(by: { $0.key < $1.key })
            where try ledger.store(store, of: session.account).revision != revision {
                try sendChanges(store: store, since: revision, to: id)
            }
        case .upload(let store, let changes):
            try DomainName.validate(store, what: "store identifier")
            traffic[session.device, default: DeviceTraffic()].uploadedChanges += changes.count
            let (acceptable, tooFarAhead) = CloudTrust.refusingFarFuture(changes, now: DeviceCloudSettings.realTime())
            var outcome = try ledger.upload(acceptable, to: store, of: session.account, from: session.device)
            outcome.refused += tooFarAhead
            let advanced = outcome.push.map { Advance(base: $0.base, revision: $0.revision) }
            send(.ack(store: store, accepted: outcome.accepted, refused: outcome.refused, superseded: outcome.superseded, advanced: advanced),
                 to: id, isPush: false)
            if let push = outcome.push {
                events("stored", [
                    "device": .string(session.device), "account": .string(session.account), "store": .string(store),
                    "revision": .integer(push.revision), "keys": .array(push.records.map { .string($0.key) }),
                ])
                traffic[session.device, default: DeviceTraffic()].appliedChanges += push.records.count
                let message = CloudMessage.changes(store: store, base: push.base, revision: push.revision, initial: false, records: push.records)
                // The writer has these records already: its ack moves its revision on.
                for (other, target) in sessions where other != id && target.account == session.account { send(message, to: other, isPush: true) }
            }
        }
    }

    func greet(_ id: Int, stores: [String: Int64]) throws {
        send(.welcome(server: serverID), to: id, isPush: false)
        for (store, revision) in stores.sorted(by: { $0.key < $1.key }) {
            try sendChanges(store: store, since: revision, to: id)
        }
    }

    /// Every change after `since`; a device at revision 0 gets its first download.
    private func sendChanges(store: String, since: Int64, to id: Int) throws {
        guard let session = sessions[id] else { return }
        try DomainName.validate(store, what: "store identifier")
        let state = try ledger.store(store, of: session.account)
        let base = min(since, state.revision)
        send(.changes(store: store, base: base, revision: state.revision, initial: since == 0, records: state.changes(since: base)),
             to: id, isPush: true)
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
                throw CloudFormatError("faults are set for \(faults.count) devices, the most the cloud keeps; heal some first (POST /v1/faults/<device> with their defaults)")
            }
            faults[device] = fault
        }
        return fault
    }

    func status() -> PlistValue {
        .dictionary([
            "server": .string(serverID), "pid": .integer(Int64(getpid())), "started": .date(started),
            "accounts": .array(ledger.knownAccounts.map { .string($0) }),
            "connected": .array(sessions.values.sorted { $0.device < $1.device }.map {
                .dictionary(["device": .string($0.device), "account": .string($0.account)])
            }),
            "faults": .dictionary(faults.mapValues(\.plist)),
            "traffic": .dictionary(traffic.mapValues(\.plist)),
        ])
    }

    func account(_ name: String) throws -> PlistValue {
        try DomainName.validate(name, what: "account name")
        guard ledger.knownAccounts.contains(name) else { throw CloudNotFound(description: "the cloud has no account \(name)") }
        return .dictionary(try ledger.stores(of: name).mapValues { state in
            .dictionary(["revision": .integer(state.revision), "values": .dictionary(state.values)])
        })
    }

    func store(_ identifier: String, of account: String) throws -> PlistValue {
        try DomainName.validate(account, what: "account name")
        guard ledger.knownAccounts.contains(account) else { throw CloudNotFound(description: "the cloud has no account \(account)") }
        guard let state = try ledger.stores(of: account)[identifier] else {
            throw CloudNotFound(description: "account \(account) has no store \(identifier) in the cloud (nothing was uploaded to it)")
        }
        return .dictionary([
            "revision": .integer(state.revision),
            "records": .dictionary(state.records.mapValues { record in
                var fields = record.plist.dictionaryValue ?? [:]
                fields["key"] = nil
                return .dictionary(fields)
            }),
        ])
    }
}
