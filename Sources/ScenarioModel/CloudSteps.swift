import CloudModel
import Foundation
import PropertyList
import SimulationValues
import SpecFormat

extension StepGrammar {
    /// A step that takes one device: `offline: iPad`. `written` gives the device of this step's action (nil: another step's).
    static func deviceStep(
        _ keyword: String, does: String, examples: [String], _ make: @escaping @Sendable (String) -> (CloudAction, String),
        written: @escaping @Sendable (CloudAction) -> String?
    ) -> StepSpec {
        StepSpec(keyword, shorthand: "a device", does: does, examples: examples) { input in
            let (action, summary) = make(try input.device())
            return (.cloud(action), summary)
        } write: {
            guard case .cloud(let action) = $0, let device = written(action) else { return nil }
            return .scalar(device)
        }
    }

    /// A step that takes nothing: `kill-cloud:`.
    static func bareStep(_ keyword: String, does: String, _ action: CloudAction, _ summary: String) -> StepSpec {
        StepSpec(keyword, shorthand: "nothing", does: does, examples: [""]) { _ in
            (.cloud(action), summary)
        } write: {
            guard case .cloud(let written) = $0, written == action else { return nil }
            return .inline("")
        }
    }

    static let pushCount = StepField.Kind.number(Int(NetworkAction.pushCountRange.lowerBound)...Int(NetworkAction.pushCountRange.upperBound))
    static let networkChoices = ["latency-ms", "partition", "heal", "drop-pushes", "duplicate-pushes"]

    static let cloudSteps: [StepSpec] = [
        StepSpec(
            "kvs-set",
            fields: [
                .required("in", .process), .required("key"), .optional("value", .value),
                .optional("bytes", .number(1...16 << 20), "in place of `value`: a string of that many bytes, for the 1 MB limits"),
                exitsField,
            ], does: "`NSUbiquitousKeyValueStore.set` in that process (the target needs `icloud-kvs`)",
            examples: [
                "{ in: app, key: theme, value: { a: [1, 2.5] } }", "{ in: app, key: big, bytes: 3 }",
                "{ in: app, key: theme, value: dark, exits: { status: 134, error: NSInvalidArgumentException } }",
            ]
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
        } write: {
            guard case .command(let process, .cloudSet(let key, let value), _) = $0 else { return nil }
            return .mapping([("in", YAMLText.scalar(process)), ("key", YAMLText.scalar(key)), ("value", YAMLText.value(value))])
        },
        StepSpec(
            "kvs-remove", fields: [.required("in", .process), .required("key"), exitsField], does: "`removeObject` on the store",
            examples: ["{ in: app, key: theme }", "{ in: app, key: theme, exits: { status: 134 } }"]
        ) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let key = try fields.node("key").string()
            return (.command(process: process, .cloudRemove(key: key)), "kvs-remove \(key) in \(process)")
        } write: {
            guard case .command(let process, .cloudRemove(let key), _) = $0 else { return nil }
            return .mapping([("in", YAMLText.scalar(process)), ("key", YAMLText.scalar(key))])
        },
        StepSpec(
            "sign-in", fields: [.required("device", .device), .required("account")],
            does: "signs the device in (switching if another account was signed in)", examples: ["{ device: iPad, account: alice }"]
        ) { input in
            let fields = try input.fields()
            let account = try fields.node("account").string()
            do { try DomainName.validate(account, what: "account name") } catch { throw fields.node("account").error("\(error)") }
            let name = try fields.device("device")!
            return (.cloud(.signIn(device: name, account: account)), "sign \(name) in to \(account)")
        } write: {
            guard case .cloud(.signIn(let device, let account)) = $0 else { return nil }
            return .mapping([("device", YAMLText.scalar(device)), ("account", YAMLText.scalar(account))])
        },
        deviceStep("sign-out", does: "signs it out: the account's values leave the device", examples: ["iPad"]) {
            (.signOut(device: $0), "sign \($0) out")
        } written: {
            guard case .signOut(let device) = $0 else { return nil }
            return device
        },
        deviceStep("offline", does: "its agent disconnects and stays so; its apps go on writing", examples: ["iPad"]) {
            (.network(device: $0, .offline), "\($0) offline")
        } written: {
            guard case .network(let device, .offline) = $0 else { return nil }
            return device
        },
        deviceStep("online", does: "its agent reconnects", examples: ["iPad"]) {
            (.network(device: $0, .online), "\($0) online")
        } written: {
            guard case .network(let device, .online) = $0 else { return nil }
            return device
        },
        StepSpec(
            "network",
            fields: [
                .required("device", .device), .optional("latency-ms", .milliseconds(NetworkAction.latencyRange)),
                .optional("partition", .flag), .optional("heal", .flag), .optional("drop-pushes", pushCount),
                .optional("duplicate-pushes", pushCount),
            ], does: "faults the cloud applies to that device's traffic; exactly one of the fields besides `device`",
            examples: [
                "{ device: iPad, latency-ms: 250 }", "{ device: iPad, partition: true }", "{ device: iPad, heal: true }",
                "{ device: iPhone, drop-pushes: 2 }", "{ device: iPhone, duplicate-pushes: 1000000 }",
            ],
            read: readNetwork, write: writeNetwork),
        StepSpec(
            "clock-skew", fields: [.required("device", .device), .required("ms", .milliseconds(NetworkAction.skewRange), "may be negative")],
            does: "the device's apps stamp writes that far off the real time", examples: ["{ device: iPad, ms: -315360000000 }"]
        ) { input in
            let fields = try input.fields()
            let name = try fields.device("device")!
            let ms = try fields.milliseconds("ms")!
            return (.cloud(.network(device: name, .skew(milliseconds: ms))), "\(name)'s clock set \(ms) ms off")
        } write: {
            guard case .cloud(.network(let device, .skew(let ms))) = $0 else { return nil }
            return .mapping([("device", YAMLText.scalar(device)), ("ms", "\(ms)")])
        },
        bareStep("kill-cloud", does: "kill -9 the cloud", .killCloud, "kill -KILL the cloud"),
        bareStep("restart-cloud", does: "starts it again (same port, same data)", .restartCloud, "restart the cloud"),
        deviceStep("kill-agent", does: "kill -9 that device's sync agent", examples: ["iPhone"]) {
            (.killAgent(device: $0), "kill -KILL \($0)'s sync agent")
        } written: {
            guard case .killAgent(let device) = $0 else { return nil }
            return device
        },
        deviceStep("restart-agent", does: "starts that device's sync agent again", examples: ["iPhone"]) {
            (.restartAgent(device: $0), "restart \($0)'s sync agent")
        } written: {
            guard case .restartAgent(let device) = $0 else { return nil }
            return device
        },
        StepSpec(
            "wait-cloud", shorthand: "nothing", fields: [.optional("timeout", .seconds, "default \(Int(ScenarioParser.defaultCloudWait))")],
            does: "has every running app with an iCloud store save its writes (`synchronize`), then waits until every signed-in, online "
                + "device with a running agent has uploaded what it can, has had its first download, and is at the cloud's revision of each of its stores; "
                + "then saves the apps again (a bridge may answer the first download with a write) and waits again, until a save adds nothing",
            examples: ["", "{ timeout: 45 }"]
        ) { input in
            var timeout = ScenarioParser.defaultCloudWait
            if input.isMapping {
                timeout = try input.fields().seconds("timeout") ?? timeout
            } else if input.body.node.null == nil {
                throw input.body.error("wait-cloud takes nothing or {timeout: SECONDS}")
            }
            return (.cloud(.waitForQuiescence(timeout: timeout)), "wait until every device and the cloud agree")
        } write: {
            guard case .cloud(.waitForQuiescence(let timeout)) = $0 else { return nil }
            return timeout == ScenarioParser.defaultCloudWait ? .inline("") : .mapping([("timeout", "\(timeout)")])
        },
        StepSpec(
            "upload-interval",
            fields: [.required("device", .device), .required("ms", .milliseconds(NetworkAction.uploadIntervalRange), "0: at once")],
            does: "the device's agent uploads each store at most once per that many ms, the latest value of each key written since "
                + "(iCloud's throttling; a device's `upload-interval-ms` sets it from the start)",
            examples: ["{ device: iPad, ms: 3000 }", "{ device: iPhone, ms: 0 }"]
        ) { input in
            let fields = try input.fields()
            let name = try fields.device("device")!
            let ms = try fields.milliseconds("ms")!
            return (.cloud(.network(device: name, .uploadInterval(milliseconds: ms))), "\(name) uploads at most once per \(ms) ms")
        } write: {
            guard case .cloud(.network(let device, .uploadInterval(let ms))) = $0 else { return nil }
            return .mapping([("device", YAMLText.scalar(device)), ("ms", "\(ms)")])
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

    /// The faults `network` reads (the other network actions have steps of their own).
    @Sendable static func writeNetwork(_ action: Step.Action) -> StepSpec.Written? {
        guard case .cloud(.network(let device, let change)) = action else { return nil }
        let field: (String, String)
        switch change {
        case .partition: field = ("partition", "true")
        case .heal: field = ("heal", "true")
        case .latency(let ms): field = ("latency-ms", "\(ms)")
        case .dropPushes(let count): field = ("drop-pushes", "\(count)")
        case .duplicatePushes(let count): field = ("duplicate-pushes", "\(count)")
        case .online, .offline, .skew, .uploadInterval: return nil
        }
        return .mapping([("device", YAMLText.scalar(device)), field])
    }
}
