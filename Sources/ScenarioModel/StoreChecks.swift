import CloudModel
import Foundation
import PropertyList
import SpecFormat

extension CheckGrammar {
    static let fileCount = StepField.Kind.number(0...PlistLimits.maximumValueCount)

    /// Checks on how a process ended, on the plists on disk and on the cloud.
    static let storeChecks: [CheckSpec] = [
        CheckSpec(
            "an exit check", lead: "exit", form: "{ exit: P, status: N }", fields: [.required("exit", .process), .required("status", exitStatus)],
            checks: "P exited with status N (a death by signal reads as a shell shows it: 128 + the signal, 137 for `KILL`)",
            examples: ["{ exit: program, status: 137 }"]
        ) { input in
            .exit(process: try input.fields.process("exit"), status: Int32(try input.fields.number("status")!))
        } write: {
            guard case .exit(let process, let status) = $0 else { return nil }
            return [("exit", YAMLText.scalar(process)), ("status", "\(status)")]
        },
        CheckSpec(
            "an acknowledged check", lead: "acknowledged", form: "{ acknowledged: P }", fields: [.required("acknowledged", .process)],
            checks: "every burst value of P whose synchronize was acknowledged is on disk", examples: ["{ acknowledged: app }"]
        ) { input in
            .acknowledged(process: try input.fields.process("acknowledged"))
        } write: {
            guard case .acknowledged(let process) = $0 else { return nil }
            return [("acknowledged", YAMLText.scalar(process))]
        },
        CheckSpec(
            "a file check", lead: "file", form: "{ file: DOMAIN, … }",
            fields: [
                .required("file", .text, "a domain"), .optional("device", .device), .optional("app", .text, "an app's private copy"),
                .optional("key"), .optional("value", .value), .optional("absent", .text, "a key"), .optional("count", fileCount),
                .optional("matching", .text, "a pattern"), .optional("length", .mapping, "`{ key: K, is: N }`"), .optional("intact", .flag),
                .optional("moved-aside", .flag),
            ],
            checks: "the domain's plist on disk, one of: `key: K, value: V` (its value); `absent: K` (the file exists and K is not in it); "
                + "`count: N` (it has N keys); `matching: PATTERN, count: N` (N of its keys match, `*` any text, `?` one character: every key "
                + "of a burst is on disk); `length: { key: K, is: N }` (the array at K has N elements); `intact: true` (it exists and parses); "
                + "`moved-aside: true` (a corrupt copy was moved aside beside it)",
            examples: [
                "{ file: group.com.example.notes, key: k, value: 1 }", "{ file: group.com.example.notes, device: iPad, absent: k }",
                "{ file: group.com.example.notes, count: 0 }", "{ file: group.com.example.notes, matching: \"k*\", count: 100 }",
                "{ file: group.com.example.notes, length: { key: notes, is: 3 } }", "{ file: group.com.example.notes, intact: true }",
                "{ file: com.example.notes, app: com.example.notes, moved-aside: true }",
            ],
            read: readFile, write: writeFile),
        CheckSpec(
            "a cloud check", lead: "cloud", form: "{ cloud: STORE, account: A, key: K, value: V }",
            fields: [
                .required("cloud", .text, "a store"), .required("account", .text, "whose copy in the cloud"), .required("key"), value,
                .optional("absent", .flag, "`true`: none, or removed"), .optional("by", .device, "that device's write won"),
                .optional(
                    "ahead-ms", .milliseconds(NetworkAction.skewRange), "its timestamp is at least that far ahead of the real time (negative: behind)"
                ),
            ],
            checks: "the cloud's value, as a skewed clock stamps it with `ahead-ms`",
            examples: [
                "{ cloud: com.example.notes, account: alice, key: k, value: 1, by: iPad, ahead-ms: -5000 }",
                "{ cloud: com.example.notes, account: alice, key: k, absent: true }",
            ]
        ) { input in
            let fields = input.fields
            guard let value = try fields.valueOrAbsent() else { throw input.node.error("a cloud or copy check needs 'value' or 'absent: true'") }
            return .cloud(
                .cloudValue(
                    store: try fields.node("cloud").string(), account: try fields.node("account").string(), key: try fields.node("key").string(),
                    value: value, writtenBy: try fields.device("by"), aheadMs: try fields.milliseconds("ahead-ms").map { Int($0) }))
        } write: {
            guard case .cloud(.cloudValue(let store, let account, let key, let expected, let writtenBy, let aheadMs)) = $0 else { return nil }
            return [
                ("cloud", YAMLText.scalar(store)), ("account", YAMLText.scalar(account)), ("key", YAMLText.scalar(key)),
                expected.map(YAMLText.valueOrAbsent), writtenBy.map { ("by", YAMLText.scalar($0)) }, aheadMs.map { ("ahead-ms", "\($0)") },
            ]
        },
        CheckSpec(
            "a copy check", lead: "copy", form: "{ copy: STORE, device: D, key: K, value: V }",
            fields: [.required("copy", .text, "a store"), .required("device", .device), .required("key"), value, absent],
            checks: "the device's copy of the store on disk",
            examples: [
                "{ copy: com.example.notes, device: iPad, key: k, value: [1] }", "{ copy: com.example.notes, device: iPhone, key: k, absent: true }",
            ]
        ) { input in
            let fields = input.fields
            guard let value = try fields.valueOrAbsent() else { throw input.node.error("a cloud or copy check needs 'value' or 'absent: true'") }
            return .cloud(
                .copyValue(
                    device: try fields.device("device")!, store: try fields.node("copy").string(), key: try fields.node("key").string(), value: value)
            )
        } write: {
            guard case .cloud(.copyValue(let device, let store, let key, let expected)) = $0 else { return nil }
            return [
                ("copy", YAMLText.scalar(store)), ("device", YAMLText.scalar(device)), ("key", YAMLText.scalar(key)),
                YAMLText.valueOrAbsent(expected),
            ]
        },
        CheckSpec(
            "an uploads check", lead: "uploads", form: "{ uploads: DEVICE, count: N }",
            fields: [.required("uploads", .device), .required("count", .number(0...ScenarioParser.maximumCount))],
            checks: "the device's agent uploaded N changes since the cloud started (the echo check)", examples: ["{ uploads: iPad, count: 2 }"]
        ) { input in
            .cloud(.uploads(device: try input.fields.device("uploads")!, count: try input.fields.number("count")!))
        } write: {
            guard case .cloud(.uploads(let device, let count)) = $0 else { return nil }
            return [("uploads", YAMLText.scalar(device)), ("count", "\(count)")]
        },
    ]

    /// `{ file: DOMAIN, device, app, key+value | absent | count | matching+count | length | intact | moved-aside }`.
    @Sendable static func readFile(_ input: CheckInput) throws -> Check {
        let fields = input.fields
        let condition: FileCheck.Condition
        if let key = fields["key"] {
            guard let value = fields["value"] else { throw input.node.error("a file check with 'key' needs 'value' (or use absent: KEY)") }
            condition = .value(key: try key.string(), try value.plistValue())
        } else if let absent = fields["absent"] {
            condition = .absent(key: try absent.string())
        } else if let count = try fields.number("count") {
            condition = try fields.text("matching").map { .countMatching(pattern: $0, count) } ?? .count(count)
        } else if let length = fields["length"] {
            let inner = try length.fields(allowed: ["key", "is"], required: ["key", "is"])
            condition = .length(key: try inner["key"]!.string(), try inner["is"]!.int(in: 0...PlistLimits.maximumValueCount))
        } else if try fields.flag("intact") == true {
            condition = .intact
        } else if try fields.flag("moved-aside") == true {
            condition = .movedAside
        } else {
            throw input.node.error("a file check needs one of: key+value, absent, count, length, intact: true, moved-aside: true")
        }
        return .file(
            FileCheck(
                domain: try fields.node("file").string(), device: try fields.device("device"), app: try fields.text("app"), condition: condition))
    }

    @Sendable static func writeFile(_ check: Check) -> [(String, String)?]? {
        guard case .file(let file) = check else { return nil }
        let condition: [(String, String)] =
            switch file.condition {
            case .value(let key, let expected): [("key", YAMLText.scalar(key)), ("value", YAMLText.value(expected))]
            case .absent(let key): [("absent", YAMLText.scalar(key))]
            case .count(let count): [("count", "\(count)")]
            case .countMatching(let pattern, let count): [("matching", YAMLText.quoted(pattern)), ("count", "\(count)")]
            case .length(let key, let count): [("length", YAMLText.mapping([("key", YAMLText.scalar(key)), ("is", "\(count)")]))]
            case .intact: [("intact", "true")]
            case .movedAside: [("moved-aside", "true")]
            }
        return [
            ("file", YAMLText.scalar(file.domain)), file.device.map { ("device", YAMLText.scalar($0)) },
            file.app.map { ("app", YAMLText.scalar($0)) },
        ]
            + condition
    }
}
