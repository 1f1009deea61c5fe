import PropertyList

/// One local write on its way to the cloud: the key, the new value (nil: removed)
/// and its stamp (which is also its id).
package struct UploadedChange: Sendable, Equatable {
    package var key: String
    package var value: PlistValue?
    package var stamp: ChangeStamp

    package init(key: String, value: PlistValue?, stamp: ChangeStamp) {
        self.key = key
        self.value = value
        self.stamp = stamp
    }
}

/// A device's change the cloud refused, and why (a limit).
package struct RefusedChange: Sendable, Equatable {
    package var key: String
    package var sequence: Int64
    package var reason: String

    package init(key: String, sequence: Int64, reason: String) {
        self.key = key
        self.sequence = sequence
        self.reason = reason
    }
}

/// A store's revision moving from `base` to `revision`, written by the
/// cloud's generation `generation` (see `StoreLineage`).
package struct Advance: Sendable, Equatable {
    package var base: Int64
    package var revision: Int64
    package var generation: String?

    package init(base: Int64, revision: Int64, generation: String? = nil) {
        self.base = base
        self.revision = revision
        self.generation = generation
    }
}

/// Which history of a store the cloud holds, so a device can tell that the
/// revisions it has are not the cloud's any more (its data deleted, restored
/// from an older copy, a damaged file set aside, removals forgotten).
///
/// Each run of the cloud is a generation with a random id; a store lists the
/// generations that wrote it and the last revision each wrote. A device
/// remembers its revision and the generation that wrote it: if the cloud's
/// list does not have that revision in that generation, the history the
/// device followed is gone (a restored copy carries the generations it had,
/// never the ones that wrote after it was taken), and the device starts over
/// from the cloud's whole store (a reset, docs/cloud.md).
package struct StoreLineage: Sendable, Equatable {
    package struct Generation: Sendable, Equatable {
        package var id: String
        /// The last revision this generation wrote.
        package var through: Int64

        package init(id: String, through: Int64) {
            self.id = id
            self.through = through
        }
    }

    /// Oldest first.
    package var generations: [Generation]
    /// Removals at or below this revision are no longer kept: a device behind
    /// it cannot learn them from the records the store keeps, so the cloud
    /// sends it the whole store (from base 0) instead of the changes.
    package var forgotten: Int64

    package init(generations: [Generation] = [], forgotten: Int64 = 0) {
        self.generations = generations
        self.forgotten = forgotten
    }

    /// The generation that wrote the newest revision.
    package var current: String? { generations.last?.id }

    /// Whether a device at `revision`, written by `generation`, is on this
    /// history and can go on from there with the changes after it. A device
    /// that has nothing (revision 0) always can; one whose file predates
    /// generations (nil) can if the cloud has its revision.
    package func continues(revision: Int64, generation: String?) -> Bool {
        if revision == 0 { return true }
        guard let generation else { return revision <= (generations.last?.through ?? 0) }
        var start: Int64 = 1
        for entry in generations {
            if entry.id == generation { return revision >= start && revision <= entry.through }
            start = entry.through + 1
        }
        return false
    }

    /// Whether a device at `revision` may lack removals the store no longer
    /// keeps (a push, which carries every record of its upload, never does).
    package func forgot(since revision: Int64) -> Bool { revision > 0 && revision < forgotten }

    package var plist: PlistValue {
        .dictionary([
            "generations": .array(generations.map { .dictionary(["id": .string($0.id), "through": .integer($0.through)]) }),
            "forgotten": .integer(forgotten),
        ])
    }

    package init(_ value: PlistValue, at path: String) throws(CloudFormatError) {
        let fields = try value.fields(at: path)
        forgotten = try fields.revision("forgotten", at: path)
        generations = []
        for (index, item) in try fields.requiredArray("generations", at: path).enumerated() {
            let entry = try item.fields(at: "\(path).generations[\(index)]")
            generations.append(
                Generation(
                    id: try entry.string("id", at: "\(path).generations[\(index)]"),
                    through: try entry.revision("through", at: "\(path).generations[\(index)]")))
        }
    }
}

/// What a device's sync agent sends the cloud, one JSON object per WebSocket
/// text frame. The wire format is in docs/cloud.md.
package enum AgentMessage: Sendable, Equatable {
    /// First message on a connection: who this is, and how far each store has got.
    case hello(device: String, account: String, stores: [String: Int64])
    /// Send every change of `store` after revision `since` (also the answer to a gap).
    case subscribe(store: String, since: Int64)
    case upload(store: String, changes: [UploadedChange])
    /// Every second: the revisions the device has; the cloud answers only if it has more.
    case poll(stores: [String: Int64])
    /// After a reset (`StoreLineage`): what the device holds that the cloud
    /// lacks, with the stamps it had (any device's), to be kept again.
    case restore(store: String, records: [UploadedChange])
}

/// What the cloud sends a device's agent.
package enum CloudMessage: Sendable, Equatable {
    case welcome(server: String)
    /// Records changed after `base` up to `revision`. `initial`: the first
    /// download of this store for this account on this device. `lineage`:
    /// the history these revisions belong to (nil from an older cloud).
    case changes(store: String, base: Int64, revision: Int64, initial: Bool, records: [CloudRecord], lineage: StoreLineage? = nil)
    /// Changes now durable in the cloud (applied, or older than what it had),
    /// changes refused, and, for each accepted change that lost to a newer
    /// write, the record that won (so the device shows the winner). When the
    /// upload changed the store, `advanced` is the revision before and after:
    /// the writer is not pushed its own records, it moves its revision on here.
    case ack(store: String, accepted: [Int64], refused: [RefusedChange], superseded: [CloudRecord], advanced: Advance?)
    /// The answer to `restore`: the keys now kept (as restored, or with the
    /// newer record in `superseded`), and those refused (a limit).
    case restored(store: String, kept: [String], refused: [RefusedChange], superseded: [CloudRecord], advanced: Advance?)
    case error(String)
}

package enum SyncCodec {
    package static func encode(_ message: AgentMessage) -> String {
        var fields: [String: PlistValue]
        switch message {
        case .hello(let device, let account, let stores):
            fields = ["type": "hello", "device": .string(device), "account": .string(account), "stores": revisions(stores)]
        case .subscribe(let store, let since):
            fields = ["type": "subscribe", "store": .string(store), "since": .integer(since)]
        case .upload(let store, let changes):
            fields = ["type": "upload", "store": .string(store), "changes": changeList(changes)]
        case .poll(let stores):
            fields = ["type": "poll", "stores": revisions(stores)]
        case .restore(let store, let records):
            fields = ["type": "restore", "store": .string(store), "records": changeList(records)]
        }
        return PlistJSON.encode(.dictionary(fields))
    }

    package static func encode(_ message: CloudMessage) -> String {
        var fields: [String: PlistValue]
        switch message {
        case .welcome(let server):
            fields = ["type": "welcome", "server": .string(server)]
        case .changes(let store, let base, let revision, let initial, let records, let lineage):
            fields = [
                "type": "changes", "store": .string(store), "base": .integer(base), "revision": .integer(revision),
                "initial": .bool(initial), "records": .array(records.map(\.plist)),
            ]
            if let lineage { fields["lineage"] = lineage.plist }
        case .ack(let store, let accepted, let refused, let superseded, let advanced):
            fields = [
                "type": "ack", "store": .string(store), "accepted": .array(accepted.map { .integer($0) }),
                "superseded": .array(superseded.map(\.plist)), "refused": refusals(refused),
            ]
            advance(advanced, into: &fields)
        case .restored(let store, let kept, let refused, let superseded, let advanced):
            fields = [
                "type": "restored", "store": .string(store), "kept": .array(kept.map { .string($0) }),
                "superseded": .array(superseded.map(\.plist)), "refused": refusals(refused),
            ]
            advance(advanced, into: &fields)
        case .error(let text):
            fields = ["type": "error", "message": .string(text)]
        }
        return PlistJSON.encode(.dictionary(fields))
    }

    package static func decodeAgentMessage(_ text: String) throws(CloudFormatError) -> AgentMessage {
        let fields = try object(text)
        switch try fields.string("type", at: "message") {
        case "hello":
            return .hello(
                device: try fields.string("device", at: "hello"), account: try fields.string("account", at: "hello"),
                stores: try revisions(fields, at: "hello"))
        case "subscribe":
            return .subscribe(store: try fields.string("store", at: "subscribe"), since: try fields.revision("since", at: "subscribe"))
        case "upload":
            return .upload(store: try fields.string("store", at: "upload"), changes: try changeList(fields, "changes", at: "upload"))
        case "restore":
            return .restore(store: try fields.string("store", at: "restore"), records: try changeList(fields, "records", at: "restore"))
        case "poll":
            return .poll(stores: try revisions(fields, at: "poll"))
        case let other:
            throw CloudFormatError("unknown message type \(CloudFormatError.brief(other)) (expected hello, subscribe, upload, poll or restore)")
        }
    }

    package static func decodeCloudMessage(_ text: String) throws(CloudFormatError) -> CloudMessage {
        let fields = try object(text)
        switch try fields.string("type", at: "message") {
        case "welcome":
            return .welcome(server: try fields.string("server", at: "welcome"))
        case "changes":
            var records: [CloudRecord] = []
            for (index, item) in try fields.requiredArray("records", at: "changes").enumerated() {
                records.append(try CloudRecord(item, at: "changes.records[\(index)]"))
            }
            var lineage: StoreLineage? = nil
            if let value = fields["lineage"] { lineage = try StoreLineage(value, at: "changes.lineage") }
            return .changes(
                store: try fields.string("store", at: "changes"), base: try fields.revision("base", at: "changes"),
                revision: try fields.revision("revision", at: "changes"), initial: try fields.bool("initial", at: "changes", default: false),
                records: records, lineage: lineage)
        case "ack":
            var accepted: [Int64] = []
            for item in try fields.requiredArray("accepted", at: "ack") {
                guard case .integer(let sequence) = item else { throw CloudFormatError("ack.accepted holds sequence numbers") }
                accepted.append(sequence)
            }
            return .ack(
                store: try fields.string("store", at: "ack"), accepted: accepted, refused: try refusals(fields, at: "ack"),
                superseded: try recordList(fields, "superseded", at: "ack"), advanced: try advance(fields, at: "ack"))
        case "restored":
            var kept: [String] = []
            for (index, item) in try fields.requiredArray("kept", at: "restored").enumerated() {
                guard case .string(let key) = item else { throw CloudFormatError("restored.kept[\(index)] must be a string") }
                kept.append(key)
            }
            return .restored(
                store: try fields.string("store", at: "restored"), kept: kept, refused: try refusals(fields, at: "restored"),
                superseded: try recordList(fields, "superseded", at: "restored"), advanced: try advance(fields, at: "restored"))
        case "error":
            return .error(try fields.string("message", at: "error"))
        case let other:
            throw CloudFormatError("unknown message type \(CloudFormatError.brief(other)) (expected welcome, changes, ack, restored or error)")
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

    private static func changeList(_ changes: [UploadedChange]) -> PlistValue {
        .array(
            changes.map { change in
                var entry = change.stamp.fields
                entry["key"] = .string(change.key)
                if let value = change.value { entry["value"] = value }
                return .dictionary(entry)
            })
    }

    private static func changeList(_ fields: [String: PlistValue], _ name: String, at path: String) throws(CloudFormatError) -> [UploadedChange] {
        var changes: [UploadedChange] = []
        for (index, item) in try fields.requiredArray(name, at: path).enumerated() {
            let where_ = "\(path).\(name)[\(index)]"
            let entry = try item.fields(at: where_)
            changes.append(
                UploadedChange(key: try entry.string("key", at: where_), value: entry["value"], stamp: try ChangeStamp(fields: entry, at: where_)))
        }
        return changes
    }

    private static func refusals(_ refused: [RefusedChange]) -> PlistValue {
        .array(refused.map { .dictionary(["key": .string($0.key), "sequence": .integer($0.sequence), "reason": .string($0.reason)]) })
    }

    private static func refusals(_ fields: [String: PlistValue], at path: String) throws(CloudFormatError) -> [RefusedChange] {
        var refused: [RefusedChange] = []
        for (index, item) in try fields.array("refused", at: path).enumerated() {
            let where_ = "\(path).refused[\(index)]"
            let entry = try item.fields(at: where_)
            refused.append(
                RefusedChange(
                    key: try entry.string("key", at: where_), sequence: try entry.integer("sequence", at: where_),
                    reason: try entry.string("reason", at: where_)))
        }
        return refused
    }

    private static func recordList(_ fields: [String: PlistValue], _ name: String, at path: String) throws(CloudFormatError) -> [CloudRecord] {
        var records: [CloudRecord] = []
        for (index, item) in try fields.array(name, at: path).enumerated() {
            records.append(try CloudRecord(item, at: "\(path).\(name)[\(index)]"))
        }
        return records
    }

    private static func advance(_ advanced: Advance?, into fields: inout [String: PlistValue]) {
        guard let advanced else { return }
        fields["base"] = .integer(advanced.base)
        fields["revision"] = .integer(advanced.revision)
        if let generation = advanced.generation { fields["generation"] = .string(generation) }
    }

    private static func advance(_ fields: [String: PlistValue], at path: String) throws(CloudFormatError) -> Advance? {
        guard fields["base"] != nil || fields["revision"] != nil else { return nil }
        return Advance(
            base: try fields.revision("base", at: path), revision: try fields.revision("revision", at: path),
            generation: fields["generation"] == nil ? nil : try fields.string("generation", at: path))
    }

    private static func revisions(_ stores: [String: Int64]) -> PlistValue {
        .dictionary(stores.mapValues { .integer($0) })
    }

    private static func revisions(_ fields: [String: PlistValue], at path: String) throws(CloudFormatError) -> [String: Int64] {
        var result: [String: Int64] = [:]
        guard fields["stores"] != nil else { throw CloudFormatError("\(path).stores is missing (an object, {} when empty)") }
        for (store, value) in try fields.dictionary("stores", at: path) {
            guard case .integer(let revision) = value, (0...CloudLimits.maximumCounter).contains(revision) else {
                throw CloudFormatError(
                    "\(path).stores.\(CloudFormatError.name(store)) must be a revision (an integer from 0 to \(CloudLimits.maximumCounter))")
            }
            result[store] = revision
        }
        return result
    }
}
