import PropertyList

/// One local write on its way to the cloud: the key, the new value (nil: removed)
/// and its stamp (which is also its id).
public struct UploadedChange: Sendable, Equatable {
    public var key: String
    public var value: PlistValue?
    public var stamp: ChangeStamp

    public init(key: String, value: PlistValue?, stamp: ChangeStamp) {
        self.key = key
        self.value = value
        self.stamp = stamp
    }
}

/// A device's change the cloud refused, and why (a limit).
public struct RefusedChange: Sendable, Equatable {
    public var key: String
    public var sequence: Int64
    public var reason: String

    public init(key: String, sequence: Int64, reason: String) {
        self.key = key
        self.sequence = sequence
        self.reason = reason
    }
}

/// A store's revision moving from `base` to `revision`.
public struct Advance: Sendable, Equatable {
    public var base: Int64
    public var revision: Int64

    public init(base: Int64, revision: Int64) {
        self.base = base
        self.revision = revision
    }
}

/// What a device's sync agent sends the cloud, one JSON object per WebSocket
/// text frame. The wire format is in docs/cloud.md.
public enum AgentMessage: Sendable, Equatable {
    /// First message on a connection: who this is, and how far each store has got.
    case hello(device: String, account: String, stores: [String: Int64])
    /// Send every change of `store` after revision `since` (also the answer to a gap).
    case subscribe(store: String, since: Int64)
    case upload(store: String, changes: [UploadedChange])
    /// Every second: the revisions the device has; the cloud answers only if it has more.
    case poll(stores: [String: Int64])
}

/// What the cloud sends a device's agent.
public enum CloudMessage: Sendable, Equatable {
    case welcome(server: String)
    /// Records changed after `base` up to `revision`. `initial`: the first
    /// download of this store for this account on this device.
    case changes(store: String, base: Int64, revision: Int64, initial: Bool, records: [CloudRecord])
    /// Changes now durable in the cloud (applied, or older than what it had),
    /// changes refused, and, for each accepted change that lost to a newer
    /// write, the record that won (so the device shows the winner). When the
    /// upload changed the store, `advanced` is the revision before and after:
    /// the writer is not pushed its own records, it moves its revision on here.
    case ack(store: String, accepted: [Int64], refused: [RefusedChange], superseded: [CloudRecord], advanced: Advance?)
    case error(String)
}

public enum SyncCodec {
    public static func encode(_ message: AgentMessage) -> String {
        var fields: [String: PlistValue]
        switch message {
        case .hello(let device, let account, let stores):
            fields = ["type": "hello", "device": .string(device), "account": .string(account), "stores": revisions(stores)]
        case .subscribe(let store, let since):
            fields = ["type": "subscribe", "store": .string(store), "since": .integer(since)]
        case .upload(let store, let changes):
            fields = ["type": "upload", "store": .string(store), "changes": .array(changes.map { change in
                var entry = change.stamp.fields
                entry["key"] = .string(change.key)
                if let value = change.value { entry["value"] = value }
                return .dictionary(entry)
            })]
        case .poll(let stores):
            fields = ["type": "poll", "stores": revisions(stores)]
        }
        return PlistJSON.encode(.dictionary(fields))
    }

    public static func encode(_ message: CloudMessage) -> String {
        var fields: [String: PlistValue]
        switch message {
        case .welcome(let server):
            fields = ["type": "welcome", "server": .string(server)]
        case .changes(let store, let base, let revision, let initial, let records):
            fields = ["type": "changes", "store": .string(store), "base": .integer(base), "revision": .integer(revision),
                      "initial": .bool(initial), "records": .array(records.map(\.plist))]
        case .ack(let store, let accepted, let refused, let superseded, let advanced):
            fields = ["type": "ack", "store": .string(store), "accepted": .array(accepted.map { .integer($0) }),
                      "superseded": .array(superseded.map(\.plist)),
                      "refused": .array(refused.map {
                          .dictionary(["key": .string($0.key), "sequence": .integer($0.sequence), "reason": .string($0.reason)])
                      })]
            if let advanced {
                fields["base"] = .integer(advanced.base)
                fields["revision"] = .integer(advanced.revision)
            }
        case .error(let text):
            fields = ["type": "error", "message": .string(text)]
        }
        return PlistJSON.encode(.dictionary(fields))
    }

    public static func decodeAgentMessage(_ text: String) throws(CloudFormatError) -> AgentMessage {
        let fields = try object(text)
        switch try fields.string("type", at: "message") {
        case "hello":
            return .hello(device: try fields.string("device", at: "hello"), account: try fields.string("account", at: "hello"),
                          stores: try revisions(fields, at: "hello"))
        case "subscribe":
            return .subscribe(store: try fields.string("store", at: "subscribe"), since: try fields.revision("since", at: "subscribe"))
        case "upload":
            var changes: [UploadedChange] = []
            for (index, item) in try fields.requiredArray("changes", at: "upload").enumerated() {
                let path = "upload.changes[\(index)]"
                let entry = try item.fields(at: path)
                changes.append(UploadedChange(
                    key: try entry.string("key", at: path), value: entry["value"], stamp: try ChangeStamp(fields: entry, at: path)))
            }
            return .upload(store: try fields.string("store", at: "upload"), changes: changes)
        case "poll":
            return .poll(stores: try revisions(fields, at: "poll"))
        case let other:
            throw CloudFormatError("unknown message type \(CloudFormatError.brief(other)) (expected hello, subscribe, upload or poll)")
        }
    }

    public static func decodeCloudMessage(_ text: String) throws(CloudFormatError) -> CloudMessage {
        let fields = try object(text)
        switch try fields.string("type", at: "message") {
        case "welcome":
            return .welcome(server: try fields.string("server", at: "welcome"))
        case "changes":
            var records: [CloudRecord] = []
            for (index, item) in try fields.requiredArray("records", at: "changes").enumerated() {
                records.append(try CloudRecord(item, at: "changes.records[\(index)]"))
            }
            return .changes(
                store: try fields.string("store", at: "changes"), base: try fields.revision("base", at: "changes"),
                revision: try fields.revision("revision", at: "changes"), initial: try fields.bool("initial", at: "changes", default: false),
                records: records)
        case "ack":
            var accepted: [Int64] = []
            for item in try fields.requiredArray("accepted", at: "ack") {
                guard case .integer(let sequence) = item else { throw CloudFormatError("ack.accepted holds sequence numbers") }
                accepted.append(sequence)
            }
            var refused: [RefusedChange] = []
            for (index, item) in try fields.array("refused", at: "ack").enumerated() {
                let path = "ack.refused[\(index)]"
                let entry = try item.fields(at: path)
                refused.append(RefusedChange(
                    key: try entry.string("key", at: path), sequence: try entry.integer("sequence", at: path),
                    reason: try entry.string("reason", at: path)))
            }
            var superseded: [CloudRecord] = []
            for (index, item) in try fields.array("superseded", at: "ack").enumerated() {
                superseded.append(try CloudRecord(item, at: "ack.superseded[\(index)]"))
            }
            var advanced: Advance? = nil
            if fields["base"] != nil || fields["revision"] != nil {
                advanced = Advance(base: try fields.revision("base", at: "ack"), revision: try fields.revision("revision", at: "ack"))
            }
            return .ack(store: try fields.string("store", at: "ack"), accepted: accepted, refused: refused, superseded: superseded, advanced: advanced)
        case "error":
            return .error(try fields.string("message", at: "error"))
        case let other:
            throw CloudFormatError("unknown message type \(CloudFormatError.brief(other)) (expected welcome, changes, ack or error)")
        }
    }

    private static func object(_ text: String) throws(CloudFormatError) -> [String: PlistValue] {
        do {
            // A value sits four levels below the message's top (message, list, change, value).
            let json = try PlistJSON.parse(text, maximumDepth: PlistLimits.maximumDepth + 4)
            return try PlistJSON.decode(json, path: "message").fields(at: "message")
        } catch let error as CloudFormatError {
            throw error
        } catch {
            throw CloudFormatError("not a sync message: \(error)")
        }
    }

    private static func revisions(_ stores: [String: Int64]) -> PlistValue {
        .dictionary(stores.mapValues { .integer($0) })
    }

    private static func revisions(_ fields: [String: PlistValue], at path: String) throws(CloudFormatError) -> [String: Int64] {
        var result: [String: Int64] = [:]
        guard fields["stores"] != nil else { throw CloudFormatError("\(path).stores is missing (an object, {} when empty)") }
        for (store, value) in try fields.dictionary("stores", at: path) {
            guard case .integer(let revision) = value, (0...CloudLimits.maximumCounter).contains(revision) else {
                throw CloudFormatError("\(path).stores.\(CloudFormatError.name(store)) must be a revision (an integer from 0 to \(CloudLimits.maximumCounter))")
            }
            result[store] = revision
        }
        return result
    }
}
