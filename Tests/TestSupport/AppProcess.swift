import Foundation
import PropertyList

/// A simulated app process (main-app, widget, intent-extension) driven
/// through its JSON control protocol, as the scenario runner drives it.
public final class AppProcess: @unchecked Sendable {
    public let process: RunningProcess
    public private(set) var ready: [String: Any] = [:]
    /// Lines read while waiting for something else, for later waits.
    private var backlog: [[String: Any]] = []
    private var nextID = 0

    public init(_ role: String, root: TemporaryRoot, manifest: String? = nil, device: String = "iPhone", arguments: [String] = [],
                launchArguments: [String] = [], environment: [String: String] = [:]) throws {
        var all = ["--json"] + (manifest.map { ["--manifest", $0] } ?? []) + arguments
        if !launchArguments.isEmpty { all += ["--"] + launchArguments }
        process = try RunningProcess(
            BuiltExecutable.path(role), all,
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": device].merging(environment) { _, new in new })
        if role != "intent-extension" { ready = try event { $0["event"] as? String == "ready" } }
    }

    /// One output line, read by the same strict reader as the processes and
    /// the runner use; its values in Foundation form for the predicates.
    static func parse(_ line: String) -> [String: Any]? {
        guard let object = try? PlistJSON.parseObject(line, maximumFieldDepth: ProtocolLine.maximumFieldDepth) else { return nil }
        return object.mapValues(\.foundationValue)
    }

    /// The next event or response satisfying `predicate` (earlier non-matching lines are kept).
    @discardableResult
    public func event(timeout: TimeInterval = 20, _ predicate: ([String: Any]) -> Bool) throws -> [String: Any] {
        if let index = backlog.firstIndex(where: predicate) { return backlog.remove(at: index) }
        var found: [String: Any]? = nil
        try process.waitForLine(timeout: timeout) { line in
            guard let object = Self.parse(line) else { return false }
            if predicate(object) { found = object; return true }
            backlog.append(object)
            return false
        }
        return found!
    }

    /// Sends a request and returns its response.
    @discardableResult
    public func request(_ command: String, _ fields: [String: Any] = [:], timeout: TimeInterval = 20) throws -> [String: Any] {
        nextID += 1
        let id = nextID
        var object = fields
        object["id"] = id
        object["cmd"] = command
        let data = try JSONSerialization.data(withJSONObject: object)
        process.write(String(decoding: data, as: UTF8.self))
        return try event(timeout: timeout) { ($0["id"] as? Int) == id }
    }

    /// Sends a raw line (for malformed-input tests) and returns the next response.
    public func send(raw line: String) throws -> [String: Any] {
        process.write(line)
        return try event { $0["ok"] != nil }
    }

    /// Sends a raw line and returns the raw text of the response to it (the
    /// next line with "ok"), for checks on exactly what crossed the protocol.
    public func rawResponse(to line: String, timeout: TimeInterval = 20) throws -> String {
        process.write(line)
        var found: String? = nil
        try process.waitForLine(timeout: timeout) { text in
            guard let object = Self.parse(text) else { return false }
            if object["ok"] != nil { found = text; return true }
            backlog.append(object)
            return false
        }
        guard let found else { throw RunningProcess.Timeout(description: "no response to \(line)") }
        return found
    }

    /// The value a `get` returns.
    public func get(_ key: String) throws -> (value: PlistValue?, domain: String?) {
        let response = try request("get", ["key": key])
        return (try ProtocolLine.plistValue(response["value"]), response["domain"] as? String)
    }

    public func set(_ key: String, _ value: Any) throws {
        let response = try request("set", ["key": key, "value": value])
        guard response["ok"] as? Bool == true else { throw RunningProcess.Timeout(description: "set failed: \(response)") }
    }

    /// Waits for a change event of `key` whose new value satisfies `matches`.
    @discardableResult
    public func change(_ key: String, timeout: TimeInterval = 20, where matches: (PlistValue?) -> Bool) throws -> [String: Any] {
        try event(timeout: timeout) { object in
            guard object["event"] as? String == "change", object["key"] as? String == key else { return false }
            return matches(try? ProtocolLine.plistValue(object["new"]))
        }
    }

    /// Waits for a widget render; returns its card as key → value.
    public func render(timeout: TimeInterval = 20, reason: String? = nil) throws -> [String: PlistValue?] {
        let object = try event(timeout: timeout) { $0["event"] as? String == "render" && (reason == nil || $0["reason"] as? String == reason) }
        var card: [String: PlistValue?] = [:]
        for line in object["card"] as? [[String: Any]] ?? [] {
            guard let key = line["key"] as? String else { continue }
            card.updateValue(try? ProtocolLine.plistValue(line["value"]), forKey: key)  // absent stays a nil entry
        }
        return card
    }

    /// Lines seen so far that were not consumed by a wait.
    public var unconsumed: [[String: Any]] { backlog }

    public func closeInput() { process.closeStdin() }

    public func waitForExit() throws -> Int32 { try process.waitForExit() }
}

/// Protocol lines as the tests see them.
enum ProtocolLine {
    /// A render's card wraps its values two levels below the field.
    static let maximumFieldDepth = PlistLimits.maximumDepth + 2

    /// A field's value as a property-list value; nil for null or a missing field.
    static func plistValue(_ field: Any?) throws -> PlistValue? {
        guard let field, !(field is NSNull) else { return nil }
        return try PlistJSON.decode(JSONValue(foundation: field))
    }
}

extension JSONValue {
    /// Foundation form: Int, Double, Bool, String, NSNull, [Any], [String: Any].
    var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let b): b
        case .integer(let i): Int(i)
        case .real(let d): d
        case .string(let s): s
        case .array(let elements): elements.map(\.foundationValue)
        case .object(let members): members.mapValues(\.foundationValue)
        }
    }

    /// Back from `foundationValue` (exact for everything it makes).
    init(foundation value: Any) throws {
        switch value {
        case is NSNull: self = .null
        case let b as Bool where type(of: value) == Bool.self: self = .bool(b)
        case let i as Int where type(of: value) == Int.self: self = .integer(Int64(i))
        case let d as Double where type(of: value) == Double.self: self = .real(d)
        case let s as String: self = .string(s)
        case let elements as [Any]: self = .array(try elements.map(JSONValue.init(foundation:)))
        case let members as [String: Any]: self = .object(try members.mapValues(JSONValue.init(foundation:)))
        default: throw RunningProcess.Timeout(description: "not a JSON value: \(value)")
        }
    }
}
