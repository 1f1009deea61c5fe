import CloudModel
import Foundation
import GroupDefaults
import PropertyList
import SpecFormat

/// A device as a scenario declares it: `- iPad` or `- iPad: {account: alice, clock-skew-ms: 5000, online: false}`.
public struct DeviceSpec: Sendable, Equatable {
    public let name: String
    public var account: String?
    public var clockSkewMilliseconds: Int64 = 0
    public var online = true
}

/// A runner step that acts on the cloud, a device's account or its network.
public enum CloudAction: Sendable {
    case signIn(device: String, account: String)
    case signOut(device: String)
    case network(device: String, NetworkAction)
    case killCloud
    case restartCloud
    case killAgent(device: String)
    case restartAgent(device: String)
    /// Until every signed-in, online device has uploaded what it can and has every revision the cloud has.
    case waitForQuiescence(timeout: Double)
}

/// A check on the cloud's side of the state.
public enum CloudCheck: Sendable {
    /// The cloud's value of a key (Some(nil): absent), and optionally which device's write it is.
    /// `aheadMs`: the winning write's timestamp is at least that far ahead of the real time now
    /// (negative: at least that far behind), as a skewed clock leaves it.
    case cloudValue(store: String, account: String, key: String, value: PlistValue??, writtenBy: String?, aheadMs: Int?)
    /// A device's copy of a store.
    case copyValue(device: String, store: String, key: String, value: PlistValue?)
    /// How many changes a device's agent uploaded (the echo test counts them).
    case uploads(device: String, count: Int)
}

extension ScenarioParser {
    static let cloudStepKeywords = [
        "kvs-set", "kvs-remove", "sign-in", "sign-out", "offline", "online", "network", "clock-skew",
        "kill-cloud", "restart-cloud", "kill-agent", "restart-agent", "wait-cloud",
    ]

    /// The `devices:` list: names, or one-entry mappings with the device's cloud settings.
    static func parseDevices(_ node: SpecNode?) throws -> [DeviceSpec] {
        guard let node else { return [DeviceSpec(name: SimulationRoot.defaultDevice)] }
        var devices: [DeviceSpec] = []
        for item in try node.listOrSingle() {
            var spec: DeviceSpec
            if case .mapping = item.node {
                let entries = try item.entries()
                guard entries.count == 1, let (name, body) = entries.first else {
                    throw item.error("a device is a name, or one name with its settings: '- iPad: {account: alice}'")
                }
                spec = DeviceSpec(name: name)
                let fields = try body.fields(allowed: ["account", "clock-skew-ms", "online"])
                spec.account = try fields["account"]?.string()
                if let account = spec.account {
                    do { try DomainName.validate(account, what: "account name") } catch { throw fields["account"]!.error("\(error)") }
                }
                spec.clockSkewMilliseconds = try fields["clock-skew-ms"]?.int64(in: NetworkAction.skewRange) ?? 0
                spec.online = try fields["online"]?.bool() ?? true
            } else {
                spec = DeviceSpec(name: try item.string())
            }
            do { try DomainName.validate(spec.name, what: "device name") } catch { throw item.error("\(error)") }
            guard !devices.contains(where: { $0.name == spec.name }) else { throw item.error("device '\(spec.name)' is declared twice") }
            devices.append(spec)
        }
        return devices
    }

    static func parseCloudAction(_ keyword: String, _ body: SpecNode, _ context: Context) throws -> (Step.Action, String) {
        func device(_ node: SpecNode) throws -> String {
            guard let name = try context.device(node) else { throw node.error("name a device") }
            return name
        }
        switch keyword {
        case "kvs-set", "kvs-remove":
            let fields = try body.fields(allowed: keyword == "kvs-set" ? ["in", "key", "value", "bytes"] : ["in", "key"], required: ["in", "key"])
            let process = try context.process(fields["in"]!)
            let key = try fields["key"]!.string()
            if keyword == "kvs-set" {
                // `bytes: N`: a string of N "x" (N bytes in the store), for limits a file could not spell out.
                let value: PlistValue
                switch (fields["value"], fields["bytes"]) {
                case (let node?, nil): value = try node.plistValue()
                case (nil, let node?): value = .string(String(repeating: "x", count: try node.int(in: 1...16 << 20)))
                default: throw body.error("kvs-set takes 'value' or 'bytes' (a generated string of that many bytes)")
                }
                if case .string(let text) = value, fields["bytes"] != nil {
                    return (.command(process: process, .cloudSet(key: key, value: value)), "kvs-set \(key)=<\(text.utf8.count) bytes> in \(process)")
                }
                return (.command(process: process, .cloudSet(key: key, value: value)), "kvs-set \(key)=\(PlistJSON.encode(value)) in \(process)")
            }
            return (.command(process: process, .cloudRemove(key: key)), "kvs-remove \(key) in \(process)")
        case "sign-in":
            let fields = try body.fields(allowed: ["device", "account"], required: ["device", "account"])
            let account = try fields["account"]!.string()
            do { try DomainName.validate(account, what: "account name") } catch { throw fields["account"]!.error("\(error)") }
            let name = try device(fields["device"]!)
            return (.cloud(.signIn(device: name, account: account)), "sign \(name) in to \(account)")
        case "sign-out":
            let name = try device(body)
            return (.cloud(.signOut(device: name)), "sign \(name) out")
        case "offline", "online":
            let name = try device(body)
            return (.cloud(.network(device: name, keyword == "offline" ? .offline : .online)), "\(name) \(keyword)")
        case "network":
            let fields = try body.fields(allowed: ["device", "latency-ms", "partition", "heal", "drop-pushes", "duplicate-pushes"], required: ["device"])
            let name = try device(fields["device"]!)
            let chosen = fields.keys.filter { $0 != "device" }
            guard chosen.count == 1, let word = chosen.first else {
                throw body.error("network takes a device and one of latency-ms, partition, heal, drop-pushes, duplicate-pushes")
            }
            let node = fields[word]!
            let action: NetworkAction
            switch word {
            case "latency-ms": action = .latency(milliseconds: try node.int64(in: NetworkAction.latencyRange))
            case "partition":
                guard try node.bool() else { throw node.error("write 'heal: true' to end a partition") }
                action = .partition
            case "heal":
                guard try node.bool() else { throw node.error("heal takes true") }
                action = .heal
            case "drop-pushes": action = .dropPushes(try node.int64(in: NetworkAction.pushCountRange))
            default: action = .duplicatePushes(try node.int64(in: NetworkAction.pushCountRange))
            }
            return (.cloud(.network(device: name, action)), "network \(name): \(word) \((try? node.plistValue()).map { PlistJSON.encode($0) } ?? "")")
        case "clock-skew":
            let fields = try body.fields(allowed: ["device", "ms"], required: ["device", "ms"])
            let name = try device(fields["device"]!)
            let ms = try fields["ms"]!.int64(in: NetworkAction.skewRange)
            return (.cloud(.network(device: name, .skew(milliseconds: ms))), "\(name)'s clock set \(ms) ms off")
        case "kill-cloud": return (.cloud(.killCloud), "kill -KILL the cloud")
        case "restart-cloud": return (.cloud(.restartCloud), "restart the cloud")
        case "kill-agent":
            let name = try device(body)
            return (.cloud(.killAgent(device: name)), "kill -KILL \(name)'s sync agent")
        case "restart-agent":
            let name = try device(body)
            return (.cloud(.restartAgent(device: name)), "restart \(name)'s sync agent")
        case "wait-cloud":
            var timeout = 20.0
            if case .mapping = body.node {
                let fields = try body.fields(allowed: ["timeout"])
                timeout = try fields["timeout"]?.seconds(atMost: maximumWait) ?? timeout
            } else if body.node.null == nil {
                throw body.error("wait-cloud takes nothing or {timeout: SECONDS}")
            }
            return (.cloud(.waitForQuiescence(timeout: timeout)), "wait until every device and the cloud agree")
        default:
            throw body.error("unknown step '\(keyword)'")
        }
    }

    /// `{cloud: STORE, account: A, key: K, value: V | absent: true, by: DEVICE, ahead-ms: N}`,
    /// `{copy: STORE, device: D, key: K, value: V | absent: true}`, `{uploads: DEVICE, count: N}`.
    static func parseCloudCheck(_ fields: [String: SpecNode], _ node: SpecNode, _ context: Context) throws -> Check? {
        if let uploads = fields["uploads"] {
            guard let device = try context.device(uploads), let count = fields["count"] else { throw node.error("an uploads check needs a device and 'count'") }
            return .cloud(.uploads(device: device, count: try count.int(in: 0...maximumCount)))
        }
        func keyAndValue() throws -> (String, PlistValue??) {
            guard let key = fields["key"] else { throw node.error("a cloud or copy check needs 'key' and 'value' or 'absent: true'") }
            if let value = fields["value"] { return (try key.string(), .some(try value.plistValue())) }
            if try fields["absent"]?.bool() == true { return (try key.string(), .some(nil)) }
            throw node.error("a cloud or copy check needs 'value' or 'absent: true'")
        }
        if let store = fields["cloud"] {
            guard let account = fields["account"] else { throw node.error("a cloud check needs 'account' (whose copy in the cloud)") }
            let (key, value) = try keyAndValue()
            return .cloud(.cloudValue(store: try store.string(), account: try account.string(), key: key, value: value,
                                      writtenBy: try context.device(fields["by"]),
                                      aheadMs: try fields["ahead-ms"].map { Int(try $0.int64(in: NetworkAction.skewRange)) }))
        }
        if let store = fields["copy"] {
            guard let device = try context.device(fields["device"]) else { throw node.error("a copy check needs 'device'") }
            let (key, value) = try keyAndValue()
            return .cloud(.copyValue(device: device, store: try store.string(), key: key, value: value ?? nil))
        }
        return nil
    }
}

enum CloudReasons {
    static let all = ExternalChangeReason.allCases.map(\.rawValue)
}

extension SpecNode {
    /// A whole number in a range given in 64 bits (the cloud's bounds), with the node's place in errors.
    func int64(in range: ClosedRange<Int64>) throws -> Int64 {
        Int64(try int(in: Int(range.lowerBound)...Int(range.upperBound)))
    }
}
