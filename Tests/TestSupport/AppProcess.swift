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

    static func parse(_ line: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
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

    /// The value a `get` returns.
    public func get(_ key: String) throws -> (value: PlistValue?, domain: String?) {
        let response = try request("get", ["key": key])
        let raw = response["value"]
        let value = (raw == nil || raw is NSNull) ? nil : try PlistJSON.decode(raw!)
        return (value, response["domain"] as? String)
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
            let raw = object["new"]
            return matches((raw == nil || raw is NSNull) ? nil : try? PlistJSON.decode(raw!))
        }
    }

    /// Waits for a widget render; returns its card as key → value.
    public func render(timeout: TimeInterval = 20, reason: String? = nil) throws -> [String: PlistValue?] {
        let object = try event(timeout: timeout) { $0["event"] as? String == "render" && (reason == nil || $0["reason"] as? String == reason) }
        var card: [String: PlistValue?] = [:]
        for line in object["card"] as? [[String: Any]] ?? [] {
            let raw = line["value"]
            card[line["key"] as! String] = (raw == nil || raw is NSNull) ? PlistValue?.none : try? PlistJSON.decode(raw!)
        }
        return card
    }

    /// Lines seen so far that were not consumed by a wait.
    public var unconsumed: [[String: Any]] { backlog }

    public func closeInput() { process.closeStdin() }

    public func waitForExit() throws -> Int32 { try process.waitForExit() }
}
