import CloudModel
import Foundation
import GroupDefaults
import PropertyList
import SpecFormat

/// A device as a scenario declares it: `- iPad` or `- iPad: {account: alice, clock-skew-ms: 5000, online: false}`.
package struct DeviceSpec: Sendable, Equatable {
    package let name: String
    package var account: String?
    package var clockSkewMilliseconds: Int64 = 0
    package var online = true
    /// The device's platform and preferences cache (docs/apple-traps.md).
    package var settings = DeviceSettings()
    /// `upload-interval-ms`: the agent uploads a store at most once per this many ms (0: at once, the default).
    package var uploadIntervalMilliseconds: Int64 = 0
    /// `writes-before-first-download: kept` (not Apple's rule: the default, `overwritten`, is).
    package var keepsWritesBeforeFirstDownload = false
}

/// A runner step that acts on the cloud, a device's account or its network.
package enum CloudAction: Sendable {
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
package enum CloudCheck: Sendable {
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
                let fields = try body.fields(allowed: [
                    "account", "clock-skew-ms", "online", "platform", "preferences-cache", "upload-interval-ms", "writes-before-first-download",
                ])
                spec.settings = try parseDeviceSettings(fields)
                spec.account = try fields["account"]?.string()
                if let account = spec.account {
                    do { try DomainName.validate(account, what: "account name") } catch { throw fields["account"]!.error("\(error)") }
                }
                spec.clockSkewMilliseconds = try fields["clock-skew-ms"]?.int64(in: NetworkAction.skewRange) ?? 0
                spec.online = try fields["online"]?.bool() ?? true
                spec.uploadIntervalMilliseconds = try fields["upload-interval-ms"]?.int64(in: NetworkAction.uploadIntervalRange) ?? 0
                if let node = fields["writes-before-first-download"] {
                    switch try node.string() {
                    case "overwritten": spec.keepsWritesBeforeFirstDownload = false
                    case "kept": spec.keepsWritesBeforeFirstDownload = true
                    case let other:
                        throw node.error("writes-before-first-download is 'overwritten' (Apple's rule, the default) or 'kept', not '\(other)'")
                    }
                }
            } else {
                spec = DeviceSpec(name: try item.string())
            }
            do { try DomainName.validate(spec.name, what: "device name") } catch { throw item.error("\(error)") }
            guard !devices.contains(where: { $0.name == spec.name }) else { throw item.error("device '\(spec.name)' is declared twice") }
            devices.append(spec)
        }
        return devices
    }

    /// `platform: tvOS`, `preferences-cache: true`: a device's settings (the cache's default is the platform's).
    static func parseDeviceSettings(_ fields: [String: SpecNode]) throws -> DeviceSettings {
        var platform = DevicePlatform.default
        if let node = fields["platform"] {
            do { platform = try DevicePlatform.named(try node.string()) } catch let error as DefaultsError { throw node.error("\(error)") }
        }
        return DeviceSettings(platform: platform, preferencesCache: try fields["preferences-cache"]?.bool())
    }

    /// `{cloud: STORE, account: A, key: K, value: V | absent: true, by: DEVICE, ahead-ms: N}`,
    /// `{copy: STORE, device: D, key: K, value: V | absent: true}`, `{uploads: DEVICE, count: N}`.
    static func parseCloudCheck(_ fields: [String: SpecNode], _ node: SpecNode, _ context: Context) throws -> Check? {
        if let uploads = fields["uploads"] {
            guard let device = try context.device(uploads), let count = fields["count"] else {
                throw node.error("an uploads check needs a device and 'count'")
            }
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
            return .cloud(
                .cloudValue(
                    store: try store.string(), account: try account.string(), key: key, value: value,
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

extension StepGrammar {
    /// A step that takes one device: `offline: iPad`.
    static func deviceStep(_ keyword: String, does: String, _ make: @escaping @Sendable (String) -> (CloudAction, String)) -> StepSpec {
        StepSpec(keyword, shorthand: "a device", does: does) { input in
            let (action, summary) = make(try input.device())
            return (.cloud(action), summary)
        }
    }

    /// A step that takes nothing: `kill-cloud:`.
    static func bareStep(_ keyword: String, does: String, _ action: CloudAction, _ summary: String) -> StepSpec {
        StepSpec(keyword, shorthand: "nothing", does: does) { _ in (.cloud(action), summary) }
    }

    static let pushCount = StepField.Kind.number(Int(NetworkAction.pushCountRange.lowerBound)...Int(NetworkAction.pushCountRange.upperBound))
    static let networkChoices = ["latency-ms", "partition", "heal", "drop-pushes", "duplicate-pushes"]

    static let cloudSteps: [StepSpec] = [
        StepSpec(
            "kvs-set",
            fields: [
                .required("in", .process), .required("key"), .optional("value", .value),
                .optional("bytes", .number(1...16 << 20), "in place of `value`: a string of that many bytes, for the 1 MB limits"),
                StepGrammar.exitsField,
            ], does: "`NSUbiquitousKeyValueStore.set` in that process (the target needs `icloud-kvs`)"
        ) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let key = try fields.node("key").string()
            switch (fields["value"], fields["bytes"]) {
            case (let node?, nil):
                let value = try node.plistValue()
                return (.command(process: process, .cloudSet(key: key, value: value)), "kvs-set \(key)=\(PlistJSON.encode(value)) in \(process)")
            case (nil, _?):
                // `bytes: N`: a string of N "x" (N bytes in the store), for limits a file could not spell out.
                let size = try fields.number("bytes")!
                return (
                    .command(process: process, .cloudSet(key: key, value: .string(String(repeating: "x", count: size)))),
                    "kvs-set \(key)=<\(size) bytes> in \(process)"
                )
            default: throw input.body.error("kvs-set takes 'value' or 'bytes' (a generated string of that many bytes)")
            }
        },
        StepSpec("kvs-remove", fields: [.required("in", .process), .required("key"), StepGrammar.exitsField], does: "`removeObject` on the store") {
            input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let key = try fields.node("key").string()
            return (.command(process: process, .cloudRemove(key: key)), "kvs-remove \(key) in \(process)")
        },
        StepSpec(
            "sign-in", fields: [.required("device", .device), .required("account")],
            does: "signs the device in (switching if another account was signed in)"
        ) { input in
            let fields = try input.fields()
            let account = try fields.node("account").string()
            do { try DomainName.validate(account, what: "account name") } catch { throw fields.node("account").error("\(error)") }
            let name = try fields.device("device")!
            return (.cloud(.signIn(device: name, account: account)), "sign \(name) in to \(account)")
        },
        deviceStep("sign-out", does: "signs it out: the account's values leave the device") { (.signOut(device: $0), "sign \($0) out") },
        deviceStep("offline", does: "its agent disconnects and stays so; its apps go on writing") {
            (.network(device: $0, .offline), "\($0) offline")
        },
        deviceStep("online", does: "its agent reconnects") { (.network(device: $0, .online), "\($0) online") },
        StepSpec(
            "network",
            fields: [
                .required("device", .device), .optional("latency-ms", .milliseconds(NetworkAction.latencyRange)),
                .optional("partition", .flag), .optional("heal", .flag), .optional("drop-pushes", pushCount),
                .optional("duplicate-pushes", pushCount),
            ], does: "faults the cloud applies to that device's traffic; exactly one of the fields besides `device`", read: readNetwork),
        StepSpec(
            "clock-skew", fields: [.required("device", .device), .required("ms", .milliseconds(NetworkAction.skewRange), "may be negative")],
            does: "the device's apps stamp writes that far off the real time"
        ) { input in
            let fields = try input.fields()
            let name = try fields.device("device")!
            let ms = try fields.milliseconds("ms")!
            return (.cloud(.network(device: name, .skew(milliseconds: ms))), "\(name)'s clock set \(ms) ms off")
        },
        bareStep("kill-cloud", does: "kill -9 the cloud", .killCloud, "kill -KILL the cloud"),
        bareStep("restart-cloud", does: "starts it again (same port, same data)", .restartCloud, "restart the cloud"),
        deviceStep("kill-agent", does: "kill -9 that device's sync agent") { (.killAgent(device: $0), "kill -KILL \($0)'s sync agent") },
        deviceStep("restart-agent", does: "starts that device's sync agent again") { (.restartAgent(device: $0), "restart \($0)'s sync agent") },
        StepSpec(
            "wait-cloud", shorthand: "nothing", fields: [.optional("timeout", .seconds, "default \(Int(ScenarioParser.defaultCloudWait))")],
            does: "has every running app with an iCloud store save its writes (`synchronize`), then waits until every signed-in, online "
                + "device with a running agent has uploaded what it can, has had its first download, and is at the cloud's revision of each of its stores; "
                + "then saves the apps again (a bridge may answer the first download with a write) and waits again, until a save adds nothing"
        ) { input in
            var timeout = ScenarioParser.defaultCloudWait
            if input.isMapping {
                timeout = try input.fields().seconds("timeout") ?? timeout
            } else if input.body.node.null == nil {
                throw input.body.error("wait-cloud takes nothing or {timeout: SECONDS}")
            }
            return (.cloud(.waitForQuiescence(timeout: timeout)), "wait until every device and the cloud agree")
        },
        StepSpec(
            "upload-interval",
            fields: [.required("device", .device), .required("ms", .milliseconds(NetworkAction.uploadIntervalRange), "0: at once")],
            does: "the device's agent uploads each store at most once per that many ms, the latest value of each key written since "
                + "(iCloud's throttling; a device's `upload-interval-ms` sets it from the start)"
        ) { input in
            let fields = try input.fields()
            let name = try fields.device("device")!
            let ms = try fields.milliseconds("ms")!
            return (.cloud(.network(device: name, .uploadInterval(milliseconds: ms))), "\(name) uploads at most once per \(ms) ms")
        },
    ]

    @Sendable static func readNetwork(_ input: StepInput) throws -> (Step.Action, String) {
        let fields = try input.fields()
        let name = try fields.device("device")!
        let chosen = fields.nodes.keys.filter { $0 != "device" }
        guard chosen.count == 1, let word = chosen.first else {
            throw input.body.error("network takes a device and one of \(networkChoices.joined(separator: ", "))")
        }
        let node = fields.node(word)
        let action: NetworkAction
        switch word {
        case "latency-ms": action = .latency(milliseconds: try fields.milliseconds(word)!)
        case "partition":
            guard try node.bool() else { throw node.error("write 'heal: true' to end a partition") }
            action = .partition
        case "heal":
            guard try node.bool() else { throw node.error("heal takes true") }
            action = .heal
        case "drop-pushes": action = .dropPushes(Int64(try fields.number(word)!))
        default: action = .duplicatePushes(Int64(try fields.number(word)!))
        }
        return (.cloud(.network(device: name, action)), "network \(name): \(word) \((try? node.plistValue()).map { PlistJSON.encode($0) } ?? "")")
    }
}
