import Foundation
import PropertyList
import SimulationValues

/// The line-delimited JSON protocol on stdin/stdout (docs/protocol.md).
/// Requests carry an id that the response repeats; events have an "event"
/// field and no id. A malformed request gets an error response and the
/// process keeps running; closing stdin ends the process cleanly.
package enum ControlProtocol {
    package static let version = 1
    /// An exit status, as a shell shows it (128 + the signal for a death by
    /// signal): what `exit` takes, and what a scenario's steps and checks name.
    package static let exitStatusRange = 0...255
    /// Requests a simulated role reads ahead of the one it is running (about
    /// 250 bytes each while they wait): past that it reads no more until one is done.
    package static let queuedRequestLimit = 4_096

    /// Parses one request line into its id and command. The line is read by
    /// the project's strict JSON reader: values arrive exactly as written or
    /// the request is refused (with its id when the line is a well-formed object).
    package static func parseRequest(_ line: String) -> (id: String, request: Result<AppRequest, AppProtocolError>) {
        let parsed = parseAddressedRequest(line)
        return (parsed.id, parsed.request)
    }

    /// `parseRequest`, with the request's optional `"suite"` field: the
    /// suite whose `UserDefaults(suiteName:)` an executable's control channel
    /// answers with (nil: `UserDefaults.standard`). The simulated roles ignore it.
    package static func parseAddressedRequest(_ line: String) -> (id: String, suite: String?, request: Result<AppRequest, AppProtocolError>) {
        let object: [String: JSONValue]
        do {
            // The request object is one level above its fields, whose values may nest as deep as a property list.
            object = try PlistJSON.parseObject(line, maximumFieldDepth: PlistLimits.maximumDepth)
        } catch {
            let id = error.partialObject?["id"].map(encodeID) ?? "null"
            return (id, nil, .failure(.unreadableRequest(error)))
        }
        let id = object["id"].map(encodeID) ?? "null"
        var suite: String?
        if let raw = object["suite"], raw != .null {
            guard let name = raw.stringValue else {
                return (id, nil, .failure(.suiteNotString(found: PlistJSON.encode(raw))))
            }
            suite = name
        }
        do {
            return (id, suite, .success(try request(from: object)))
        } catch let error as AppProtocolError {
            return (id, suite, .failure(error))
        } catch {
            return (id, suite, .failure(.unreadableRequest(error)))
        }
    }

    /// The variables that hand an executable linking SimulatedFoundation its
    /// control channel (docs/protocol.md): a connected stream socket it
    /// inherits, by descriptor number, or the path of a listening Unix socket
    /// it connects to. Read once, at load, and removed from the environment.
    package static let channelDescriptorVariable = SimulationEnvironment.Name.controlDescriptor
    package static let channelSocketVariable = SimulationEnvironment.Name.controlSocket
    /// The mangled-name prefix of SimulatedFoundation's `ControlChannel`: an
    /// executable that defines a symbol with it links SimulatedFoundation and
    /// can serve the channel (the scenario runner reads it from the file).
    package static let channelServerSymbolPrefix = "$s19SimulatedFoundation14ControlChannelC"

    /// The id as it was sent (string, number, boolean…), for the response.
    private static func encodeID(_ id: JSONValue) -> String { PlistJSON.encode(id) }

    private static func request(from object: [String: JSONValue]) throws -> AppRequest {
        guard let name = object["cmd"]?.stringValue else { throw AppProtocolError.missingCommand }
        let fields = RequestFields(command: name, object: object)
        switch name {
        case "get":
            guard let typed = object["as"] else { return .get(key: try fields.string("key")) }
            guard let name = typed.stringValue, let kind = TypedRead(rawValue: name) else {
                throw AppProtocolError.unknownTypedRead(found: PlistJSON.encode(typed), known: TypedRead.allCases.map(\.rawValue))
            }
            return .typedGet(key: try fields.string("key"), as: kind)
        case "set": return .set(key: try fields.string("key"), value: try fields.value("value"))
        case "remove": return .remove(key: try fields.string("key"))
        case "forced": return .forced(key: try fields.string("key"), domain: object["domain"] == nil ? nil : try fields.string("domain"))
        case "dump": return .dump
        case "register": return .register(defaults: try fields.dictionary("defaults"))
        case "add-suite": return .addSuite(name: try fields.string("name"))
        case "remove-suite": return .removeSuite(name: try fields.string("name"))
        case "synchronize": return .synchronize
        case "clear": return .clear
        case "increment": return .increment(key: try fields.string("key"), by: try fields.integer("by", default: 1))
        case "append":
            let raw = try fields.value("value")
            // A single value becomes an item of the array: one level less is left for it.
            if raw.arrayValue == nil, raw.nestingDepth() >= PlistLimits.maximumDepth {
                throw AppProtocolError.appendTooDeep(limit: PlistLimits.maximumDepth - 1)
            }
            return .append(key: try fields.string("key"), values: raw.arrayValue ?? [raw])
        case "merge": return .mergeDictionary(key: try fields.string("key"), entries: try fields.dictionary("value"))
        case "reload": return .reloadTimeline
        case "reload-widgets": return .reloadWidgets
        case "kvs-get": return .cloudGet(key: try fields.string("key"))
        case "kvs-set": return .cloudSet(key: try fields.string("key"), value: try fields.value("value"))
        case "kvs-remove": return .cloudRemove(key: try fields.string("key"))
        case "kvs-dump": return .cloudDump
        case "kvs-sync": return .cloudSynchronize
        case "perform-intent": return .performIntent(name: try fields.string("intent"), parameters: try fields.strings("params"))
        case "info": return .info
        case "search-list": return .searchList
        case "ping": return .ping
        case "flush-events": return .flushEvents
        case "exit":
            let status = try fields.integer("status", default: 0)
            guard exitStatusRange.contains(Int(status)) else {
                throw AppProtocolError.exitStatusOutOfRange(found: status, range: exitStatusRange)
            }
            return .exit(status: Int32(status))
        default:
            throw AppProtocolError.unknownCommand(name)
        }
    }

    /// The fields of one request, read strictly: a missing or mistyped field
    /// is an error naming the command and the field.
    private struct RequestFields {
        let command: String
        let object: [String: JSONValue]

        func string(_ field: String) throws -> String {
            guard let value = object[field]?.stringValue else {
                throw AppProtocolError.missingField(command: command, field: field, kind: "a string")
            }
            return value
        }

        func value(_ field: String) throws -> PlistValue {
            guard let raw = object[field], raw != .null else { throw AppProtocolError.missingField(command: command, field: field, kind: nil) }
            return try PlistJSON.decode(raw, path: field)
        }

        /// An optional whole-number field: absent gives the default; anything but an integer is an error.
        func integer(_ field: String, default fallback: Int64) throws -> Int64 {
            guard let raw = object[field] else { return fallback }
            guard case .integer(let value) = raw else {
                throw AppProtocolError.notWholeNumber(command: command, field: field, found: PlistJSON.encode(raw))
            }
            return value
        }

        /// An optional object whose values are all strings (absent: empty).
        func strings(_ field: String) throws -> [String: String] {
            guard let raw = object[field], raw != .null else { return [:] }
            guard case .dictionary(let entries) = try PlistJSON.decode(raw, path: field) else {
                throw AppProtocolError.notAnObject(command: command, field: field)
            }
            return try entries.mapValues { value in
                guard let text = value.stringValue else {
                    throw AppProtocolError.notStringValues(command: command, field: field, found: PlistJSON.encode(value))
                }
                return text
            }
        }

        func dictionary(_ field: String) throws -> [String: PlistValue] {
            guard case .dictionary(let entries) = try value(field) else { throw AppProtocolError.notAnObject(command: command, field: field) }
            return entries
        }
    }

    /// The request line for a request (what a driver such as the scenario runner sends).
    /// With `suite`, an executable's control channel answers with that suite's `UserDefaults(suiteName:)`.
    package static func requestLine(id: Int, _ command: AppRequest, suite: String?) -> String {
        let line = requestLine(id: id, command)
        guard let suite else { return line }
        return String(line.dropLast()) + ",\"suite\":\(PlistJSON.quote(suite))}"
    }

    package static func requestLine(id: Int, _ command: AppRequest) -> String {
        func q(_ s: String) -> String { PlistJSON.quote(s) }
        let body: String
        switch command {
        case .get(let key): body = "\"cmd\":\"get\",\"key\":\(q(key))"
        case .typedGet(let key, let kind): body = "\"cmd\":\"get\",\"key\":\(q(key)),\"as\":\(q(kind.rawValue))"
        case .set(let key, let value): body = "\"cmd\":\"set\",\"key\":\(q(key)),\"value\":\(PlistJSON.encode(value))"
        case .remove(let key): body = "\"cmd\":\"remove\",\"key\":\(q(key))"
        case .forced(let key, let domain): body = "\"cmd\":\"forced\",\"key\":\(q(key))" + (domain.map { ",\"domain\":\(q($0))" } ?? "")
        case .dump: body = "\"cmd\":\"dump\""
        case .register(let defaults): body = "\"cmd\":\"register\",\"defaults\":\(PlistJSON.encode(.dictionary(defaults)))"
        case .addSuite(let name): body = "\"cmd\":\"add-suite\",\"name\":\(q(name))"
        case .removeSuite(let name): body = "\"cmd\":\"remove-suite\",\"name\":\(q(name))"
        case .synchronize: body = "\"cmd\":\"synchronize\""
        case .clear: body = "\"cmd\":\"clear\""
        case .increment(let key, let by): body = "\"cmd\":\"increment\",\"key\":\(q(key)),\"by\":\(by)"
        case .append(let key, let values): body = "\"cmd\":\"append\",\"key\":\(q(key)),\"value\":\(PlistJSON.encode(.array(values)))"
        case .mergeDictionary(let key, let entries): body = "\"cmd\":\"merge\",\"key\":\(q(key)),\"value\":\(PlistJSON.encode(.dictionary(entries)))"
        case .reloadTimeline: body = "\"cmd\":\"reload\""
        case .reloadWidgets: body = "\"cmd\":\"reload-widgets\""
        case .cloudGet(let key): body = "\"cmd\":\"kvs-get\",\"key\":\(q(key))"
        case .cloudSet(let key, let value): body = "\"cmd\":\"kvs-set\",\"key\":\(q(key)),\"value\":\(PlistJSON.encode(value))"
        case .cloudRemove(let key): body = "\"cmd\":\"kvs-remove\",\"key\":\(q(key))"
        case .cloudDump: body = "\"cmd\":\"kvs-dump\""
        case .cloudSynchronize: body = "\"cmd\":\"kvs-sync\""
        case .performIntent(let name, let parameters):
            body =
                "\"cmd\":\"perform-intent\",\"intent\":\(q(name)),\"params\":\(PlistJSON.encode(.dictionary(parameters.mapValues { .string($0) })))"
        case .info: body = "\"cmd\":\"info\""
        case .searchList: body = "\"cmd\":\"search-list\""
        case .ping: body = "\"cmd\":\"ping\""
        case .flushEvents: body = "\"cmd\":\"flush-events\""
        case .exit(let status): body = "\"cmd\":\"exit\",\"status\":\(status)"
        }
        return "{\"id\":\(id),\(body)}"
    }

    package static func response(id: String, result: AppResponse) -> String {
        var fields = "\"id\":\(id),\"ok\":true"
        switch result {
        case .done: break
        case .value(let key, let value, let domain):
            fields += ",\"key\":\(PlistJSON.quote(key)),\"value\":\(PlistJSON.encode(value)),\"domain\":\(domain.map(PlistJSON.quote) ?? "null")"
        case .values(let entries):
            let body = entries.map { "\(PlistJSON.quote($0.key)):{\"value\":\(PlistJSON.encode($0.value)),\"domain\":\(PlistJSON.quote($0.domain))}" }
            fields += ",\"values\":{\(body.joined(separator: ","))}"
        case .integer(let value): fields += ",\"value\":\(value)"
        case .boolean(let value): fields += ",\"value\":\(value)"
        case .info(let info): fields += ",\"info\":\(PlistJSON.encode(.dictionary(info)))"
        case .searchList(let names): fields += ",\"searchList\":\(PlistJSON.encode(.array(names.map { .string($0) })))"
        case .intent(let value, let dialog, let opensApp):
            fields += ",\"value\":\(PlistJSON.encode(value)),\"dialog\":\(dialog.map(PlistJSON.quote) ?? "null"),\"opensApp\":\(opensApp)"
        }
        return "{\(fields)}"
    }

    package static func failure(id: String, message: String) -> String {
        "{\"id\":\(id),\"ok\":false,\"error\":\(PlistJSON.quote(message))}"
    }

    /// The one writer of event lines: the simulated processes and `defaults watch --json` use it.
    /// `monotonic`: CLOCK_MONOTONIC (ns) when the event began, as `monotonicNs`: a user's program stamps its events so a
    /// driver can put them in order with the output lines it read (stamped on the same clock as they came).
    package static func event(_ event: AppEvent, at date: Date = Date(), monotonic: UInt64? = nil) -> String {
        let time = "\"time\":\(PlistJSON.quote(PlistJSON.timestamp(date)))" + (monotonic.map { ",\"monotonicNs\":\($0)" } ?? "")
        switch event {
        case .ready(let info):
            return "{\"event\":\"ready\",\"protocol\":\(version),\"info\":\(PlistJSON.encode(.dictionary(info))),\(time)}"
        case .change(let change):
            return "{\"event\":\"change\",\"key\":\(PlistJSON.quote(change.key)),\"old\":\(PlistJSON.encode(change.old)),"
                + "\"new\":\(PlistJSON.encode(change.new)),\"origin\":\(PlistJSON.quote(change.origin)),"
                + "\"domain\":\(PlistJSON.quote(change.domain)),\"valueDomain\":\(change.valueDomain.map(PlistJSON.quote) ?? "null"),\(time)}"
        case .cloudChange(let reason, let keys):
            return
                "{\"event\":\"cloud-change\",\"reason\":\(PlistJSON.quote(reason)),\"keys\":\(PlistJSON.encode(.array(keys.map { .string($0) }))),\(time)}"
        case .notification(let name):
            return "{\"event\":\"notification\",\"name\":\(PlistJSON.quote(name)),\(time)}"
        case .render(let card, let reason, let entry):
            let lines = card.map {
                "{\"key\":\(PlistJSON.quote($0.key)),\"value\":\(PlistJSON.encode($0.value)),\"domain\":\($0.domain.map(PlistJSON.quote) ?? "null")}"
            }
            // Only a user's widget names its kind and entry date: the built-in widget's lines stay as they were.
            let shown = entry.map { ",\"kind\":\(PlistJSON.quote($0.kind)),\"entryDate\":\(PlistJSON.quote(PlistJSON.timestamp($0.date)))" } ?? ""
            return "{\"event\":\"render\",\"reason\":\(PlistJSON.quote(reason)),\"card\":[\(lines.joined(separator: ","))]\(shown),\(time)}"
        case .warning(let kind, let message):
            return "{\"event\":\"warning\",\"kind\":\(PlistJSON.quote(kind)),\"message\":\(PlistJSON.quote(message)),\(time)}"
        case .intentResult(let intent, let key?, let value, _, _):
            // A built-in intent's: the key it changed, as it always was.
            return
                "{\"event\":\"intent-result\",\"intent\":\(PlistJSON.quote(intent)),\"key\":\(PlistJSON.quote(key)),\"value\":\(PlistJSON.encode(value)),\(time)}"
        case .intentResult(let intent, nil, let value, let dialog, let opensApp):
            return "{\"event\":\"intent-result\",\"intent\":\(PlistJSON.quote(intent)),\"value\":\(PlistJSON.encode(value)),"
                + "\"dialog\":\(dialog.map(PlistJSON.quote) ?? "null"),\"opensApp\":\(opensApp),\(time)}"
        case .delivery(let delivery):
            var fields =
                "{\"event\":\"delivery\",\"mechanism\":\(PlistJSON.quote(delivery.mechanism.rawValue)),"
                + "\"key\":\(delivery.key.map(PlistJSON.quote) ?? "null"),\"old\":\(PlistJSON.encode(delivery.old)),"
                + "\"new\":\(PlistJSON.encode(delivery.new)),\"origin\":\(PlistJSON.quote(delivery.origin)),"
                + "\"domain\":\(PlistJSON.quote(delivery.domain))"
            if let reason = delivery.reason {
                fields += ",\"reason\":\(PlistJSON.quote(reason)),\"keys\":\(PlistJSON.encode(.array(delivery.keys.map { .string($0) })))"
            }
            return fields + ",\(time)}"
        case .error(let message):
            return "{\"event\":\"error\",\"message\":\(PlistJSON.quote(message)),\(time)}"
        case .exit(let status):
            return "{\"event\":\"exit\",\"status\":\(status),\(time)}"
        }
    }

    // MARK: Reading what a process says

    /// Decodes one line a simulated process wrote: a response or an event.
    /// The one decoder of the protocol (the runner and the tests use it).
    package static func decode(_ line: String) throws -> DecodedLine {
        let object: [String: JSONValue]
        do {
            // A render's card wraps values two levels below the event.
            object = try PlistJSON.parseObject(line, maximumFieldDepth: PlistLimits.maximumDepth + 2)
        } catch {
            throw AppProtocolError.notAProtocolLine(reason: error, line: String(line.prefix(200)))
        }
        var fields: [String: PlistValue] = [:]
        for (key, value) in object where value != .null {
            do { fields[key] = try PlistJSON.decode(value, path: key, droppingNulls: true) } catch {
                throw AppProtocolError.badLineField(key: key, line: String(line.prefix(200)), reason: error)
            }
        }
        if let name = fields["event"]?.stringValue {
            return DecodedLine(message: .event(try event(named: name, fields), time: fields["time"]?.stringValue), fields: fields)
        }
        guard fields["ok"] != nil else { throw AppProtocolError.neitherEventNorResponse(line: String(line.prefix(200))) }
        return DecodedLine(message: .response(ProtocolResponse(fields: fields)), fields: fields)
    }

    private static func event(named name: String, _ fields: [String: PlistValue]) throws -> AppEvent {
        func string(_ key: String) throws -> String {
            guard let value = fields[key]?.stringValue else { throw AppProtocolError.eventWithoutString(event: name, key: key) }
            return value
        }
        func integer(_ key: String) throws -> Int64 {
            guard case .integer(let value)? = fields[key] else { throw AppProtocolError.eventWithoutInteger(event: name, key: key) }
            return value
        }
        switch name {
        case "ready": return .ready(info: fields["info"]?.dictionaryValue ?? [:])
        case "change":
            return .change(
                ValueChange(
                    key: try string("key"), old: fields["old"], new: fields["new"], origin: try string("origin"),
                    domain: try string("domain"), valueDomain: fields["valueDomain"]?.stringValue))
        case "notification": return .notification(name: try string("name"))
        case "cloud-change":
            return .cloudChange(reason: try string("reason"), keys: (fields["keys"]?.arrayValue ?? []).compactMap(\.stringValue))
        case "render":
            let card = (fields["card"]?.arrayValue ?? []).compactMap { line -> CardLine? in
                guard let entry = line.dictionaryValue, let key = entry["key"]?.stringValue else { return nil }
                return CardLine(key: key, value: entry["value"], domain: entry["domain"]?.stringValue)
            }
            var entry: RenderedEntry?
            if let kind = fields["kind"]?.stringValue {
                guard let text = fields["entryDate"]?.stringValue, let date = PlistJSON.date(iso8601: text) else {
                    throw AppProtocolError.renderWithoutEntryDate(kind: kind)
                }
                entry = RenderedEntry(kind: kind, date: date)
            }
            return .render(card: card, reason: try string("reason"), entry: entry)
        case "warning": return .warning(kind: try string("kind"), message: try string("message"))
        case "intent-result":
            return .intentResult(
                intent: try string("intent"), key: fields["key"]?.stringValue, value: fields["value"], dialog: fields["dialog"]?.stringValue,
                opensApp: fields["opensApp"] == .bool(true))
        case "delivery":
            let named = try string("mechanism")
            guard let mechanism = DeliveryMechanism(rawValue: named) else {
                throw AppProtocolError.unknownDeliveryMechanism(named, known: DeliveryMechanism.allCases.map(\.rawValue))
            }
            return .delivery(
                Delivery(
                    mechanism: mechanism, key: fields["key"]?.stringValue, old: fields["old"], new: fields["new"], origin: try string("origin"),
                    domain: try string("domain"), reason: fields["reason"]?.stringValue,
                    keys: (fields["keys"]?.arrayValue ?? []).compactMap(\.stringValue)))
        case "error": return .error(message: try string("message"))
        case "exit":
            let status = try integer("status")
            guard let narrow = Int32(exactly: status) else { throw AppProtocolError.eventExitStatusOutOfRange(status) }
            return .exit(status: narrow)
        default: throw AppProtocolError.unknownEvent(name)
        }
    }
}

/// One decoded line: what it says, and its fields as written (for logs and reports).
package struct DecodedLine: Sendable {
    package let message: ProtocolMessage
    /// Every field of the line, nulls left out.
    package let fields: [String: PlistValue]
}

/// One line from a simulated process.
package enum ProtocolMessage: Sendable {
    case response(ProtocolResponse)
    /// An event, with the time the process stamped on it.
    case event(AppEvent, time: String?)
}

/// A response to a request: its id, whether it succeeded, and what it returned.
package struct ProtocolResponse: Sendable {
    /// Every field of the response, nulls left out.
    package let fields: [String: PlistValue]

    package init(fields: [String: PlistValue]) { self.fields = fields }

    /// The id the driver sent (drivers here send whole numbers).
    package var id: Int64? { if case .integer(let id)? = fields["id"] { id } else { nil } }
    package var ok: Bool { fields["ok"] == .bool(true) }
    package var error: String? { fields["error"]?.stringValue }
    /// `get`: the value (nil when absent), and the domain it came from.
    package var value: PlistValue? { fields["value"] }
    package var domain: String? { fields["domain"]?.stringValue }
    /// `perform-intent` of an App Intent: its dialog's text, and whether it opens the app (`openAppWhenRun`).
    package var dialog: String? { fields["dialog"]?.stringValue }
    package var opensApp: Bool { fields["opensApp"] == .bool(true) }
}
