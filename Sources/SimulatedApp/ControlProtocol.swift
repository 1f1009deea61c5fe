import Foundation
import GroupDefaults
import PropertyList
import Terminal

/// The line-delimited JSON protocol on stdin/stdout (docs/protocol.md).
/// Requests carry an id that the response repeats; events have an "event"
/// field and no id. A malformed request gets an error response and the
/// process keeps running; closing stdin ends the process cleanly.
public enum ControlProtocol {
    public static let version = 1

    /// Parses one request line into its id and command. The line is read by
    /// the project's strict JSON reader: values arrive exactly as written or
    /// the request is refused (with its id when the line is a well-formed object).
    package static func parse(_ line: String) -> (id: String, command: Result<AppCommand, AppCommandError>) {
        let object: [String: JSONValue]
        do {
            // The request object is one level above its fields, whose values may nest as deep as a property list.
            object = try PlistJSON.parseObject(line, maximumFieldDepth: PlistLimits.maximumDepth)
        } catch {
            let id = error.partialObject?["id"].map(encodeID) ?? "null"
            return (id, .failure(AppCommandError(error.description)))
        }
        let id = object["id"].map(encodeID) ?? "null"
        do {
            return (id, .success(try command(from: object)))
        } catch let error as AppCommandError {
            return (id, .failure(error))
        } catch {
            return (id, .failure(AppCommandError("\(error)")))
        }
    }

    /// The id as it was sent (string, number, boolean…), for the response.
    private static func encodeID(_ id: JSONValue) -> String { PlistJSON.encode(id) }

    private static func command(from object: [String: JSONValue]) throws -> AppCommand {
        guard let name = object["cmd"]?.stringValue else { throw AppCommandError("missing \"cmd\" (a string)") }
        func string(_ field: String) throws -> String {
            guard let value = object[field]?.stringValue else { throw AppCommandError("\(name): missing \"\(field)\" (a string)") }
            return value
        }
        func value(_ field: String) throws -> PlistValue {
            guard let raw = object[field], raw != .null else { throw AppCommandError("\(name): missing \"\(field)\"") }
            return try PlistJSON.decode(raw, path: field)
        }
        /// An optional whole-number field: absent gives the default; anything but an integer is an error.
        func integer(_ field: String, default fallback: Int64) throws -> Int64 {
            guard let raw = object[field] else { return fallback }
            guard case .integer(let value) = raw else {
                throw AppCommandError("\(name): \"\(field)\" must be a whole number, found \(PlistJSON.encode(raw))")
            }
            return value
        }
        func dictionary(_ field: String) throws -> [String: PlistValue] {
            guard case .dictionary(let entries) = try value(field) else { throw AppCommandError("\(name): \"\(field)\" must be an object") }
            return entries
        }
        switch name {
        case "get": return .get(key: try string("key"))
        case "set": return .set(key: try string("key"), value: try value("value"))
        case "remove": return .remove(key: try string("key"))
        case "dump": return .dump
        case "register": return .register(defaults: try dictionary("defaults"))
        case "add-suite": return .addSuite(name: try string("name"))
        case "remove-suite": return .removeSuite(name: try string("name"))
        case "synchronize": return .synchronize
        case "clear": return .clear
        case "increment": return .increment(key: try string("key"), by: try integer("by", default: 1))
        case "append":
            let raw = try value("value")
            // A single value becomes an item of the array: one level less is left for it.
            if raw.arrayValue == nil, raw.nestingDepth() >= PlistLimits.maximumDepth {
                throw AppCommandError("append: value nests arrays and objects more than \(PlistLimits.maximumDepth - 1) deep, "
                    + "too deep to become an item of an array; flatten it")
            }
            return .append(key: try string("key"), values: raw.arrayValue ?? [raw])
        case "merge": return .mergeDictionary(key: try string("key"), entries: try dictionary("value"))
        case "reload": return .reloadTimeline
        case "reload-widgets": return .reloadWidgets
        case "info": return .info
        case "ping": return .ping
        case "exit":
            let status = try integer("status", default: 0)
            guard (0...255).contains(status) else { throw AppCommandError("exit: \"status\" must be 0 to 255, found \(status)") }
            return .exit(status: Int32(status))
        default:
            throw AppCommandError("unknown command \"\(name)\"; known: get set remove dump register add-suite remove-suite synchronize clear increment append merge reload reload-widgets info ping exit")
        }
    }

    /// The request line for a command (what a driver such as the scenario runner sends).
    public static func request(id: Int, _ command: AppCommand) -> String {
        func q(_ s: String) -> String { PlistJSON.quote(s) }
        let body: String
        switch command {
        case .get(let key): body = "\"cmd\":\"get\",\"key\":\(q(key))"
        case .set(let key, let value): body = "\"cmd\":\"set\",\"key\":\(q(key)),\"value\":\(PlistJSON.encode(value))"
        case .remove(let key): body = "\"cmd\":\"remove\",\"key\":\(q(key))"
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
        case .info: body = "\"cmd\":\"info\""
        case .ping: body = "\"cmd\":\"ping\""
        case .exit(let status): body = "\"cmd\":\"exit\",\"status\":\(status)"
        }
        return "{\"id\":\(id),\(body)}"
    }

    static func response(id: String, result: AppCommandResult) -> String {
        var fields = "\"id\":\(id),\"ok\":true"
        switch result {
        case .done: break
        case .value(let key, let value, let domain):
            fields += ",\"key\":\(PlistJSON.quote(key)),\"value\":\(PlistJSON.encode(value)),\"domain\":\(domain.map(PlistJSON.quote) ?? "null")"
        case .values(let entries):
            let body = entries.map { "\(PlistJSON.quote($0.key)):{\"value\":\(PlistJSON.encode($0.value)),\"domain\":\(PlistJSON.quote($0.domain))}" }
            fields += ",\"values\":{\(body.joined(separator: ","))}"
        case .integer(let value): fields += ",\"value\":\(value)"
        case .info(let info): fields += ",\"info\":\(PlistJSON.encode(.dictionary(info)))"
        }
        return "{\(fields)}"
    }

    static func failure(id: String, message: String) -> String {
        "{\"id\":\(id),\"ok\":false,\"error\":\(PlistJSON.quote(message))}"
    }

    static func event(_ event: AppEvent) -> String {
        let time = "\"time\":\(PlistJSON.quote(PlistJSON.timestamp(Date())))"
        switch event {
        case .ready(let info):
            return "{\"event\":\"ready\",\"protocol\":\(version),\"info\":\(PlistJSON.encode(.dictionary(info))),\(time)}"
        case .change(let change):
            return "{\"event\":\"change\",\"key\":\(PlistJSON.quote(change.key)),\"old\":\(PlistJSON.encode(change.old)),"
                + "\"new\":\(PlistJSON.encode(change.new)),\"origin\":\"\(change.origin.rawValue)\","
                + "\"domain\":\(PlistJSON.quote(change.changedDomain)),\"valueDomain\":\(change.valueDomain.map(PlistJSON.quote) ?? "null"),\(time)}"
        case .notification(let name):
            return "{\"event\":\"notification\",\"name\":\(PlistJSON.quote(name)),\(time)}"
        case .render(let card, let reason):
            let lines = card.map { "{\"key\":\(PlistJSON.quote($0.key)),\"value\":\(PlistJSON.encode($0.value)),\"domain\":\($0.domain.map(PlistJSON.quote) ?? "null")}" }
            return "{\"event\":\"render\",\"reason\":\(PlistJSON.quote(reason)),\"card\":[\(lines.joined(separator: ","))],\(time)}"
        case .warning(let kind, let message):
            return "{\"event\":\"warning\",\"kind\":\(PlistJSON.quote(kind)),\"message\":\(PlistJSON.quote(message)),\(time)}"
        case .intentResult(let intent, let key, let value):
            return "{\"event\":\"intent-result\",\"intent\":\(PlistJSON.quote(intent)),\"key\":\(PlistJSON.quote(key)),\"value\":\(PlistJSON.encode(value)),\(time)}"
        case .error(let message):
            return "{\"event\":\"error\",\"message\":\(PlistJSON.quote(message)),\(time)}"
        case .exit(let status):
            return "{\"event\":\"exit\",\"status\":\(status),\(time)}"
        }
    }
}

/// Events as JSON lines on stdout.
final class JSONEventSink: AppEventSink {
    let output: LineWriter
    init(output: LineWriter) { self.output = output }
    func emit(_ event: AppEvent) { output.write(ControlProtocol.event(event)) }
}

/// The protocol face's loop: one request per stdin line, until EOF or `exit`.
///
/// Commands run one at a time, in order, on a serial worker, so a command
/// waiting for a file lock (held, say, by a stopped process) delays the
/// commands after it but not the reading of requests: `ping` is answered at
/// once from here, which tells a driver the process is alive, only busy.
enum ControlProtocolLoop {
    static func run(session: AppSession, output: LineWriter) -> Int32 {
        let worker = DispatchQueue(label: "groupsim.protocol.commands")
        while let line = readLine() {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let (id, parsed) = ControlProtocol.parse(line)
            switch parsed {
            case .success(.ping):
                output.write(ControlProtocol.response(id: id, result: .done))
            case .failure(let error):
                let message = error.description
                worker.async { output.write(ControlProtocol.failure(id: id, message: message)) }
            case .success(let command):
                worker.async {
                    do {
                        output.write(ControlProtocol.response(id: id, result: try session.perform(command)))
                    } catch {
                        output.write(ControlProtocol.failure(id: id, message: "\(error)"))
                    }
                }
                // Nothing after `exit` is read; the loop ends once it has run.
                if case .exit(let status) = command {
                    worker.sync {}
                    return status
                }
            }
        }
        worker.sync {}
        return 0
    }
}
