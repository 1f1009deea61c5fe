import AppProtocol
import Foundation
import PropertyList
import SpecFormat

extension StepGrammar {
    // MARK: The defaults API

    /// A request to a process: `{ in: PROCESS, … }`, summarised as "set key=… value=… in app".
    /// `write` gives the fields after `in` of a request of this step (nil: another step's).
    static func request(
        _ keyword: String, _ fields: [StepField], does: String, examples: [String],
        _ make: @escaping @Sendable (StepFields) throws -> AppRequest,
        write: @escaping @Sendable (AppRequest) -> [(String, String)?]?
    ) -> StepSpec {
        StepSpec(keyword, fields: [.required("in", .process)] + fields + [suiteField, exitsField], does: does, examples: examples) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let request = try make(fields)
            let suite = try input.context.suite(of: process, fields.nodes["suite"])
            return (.command(process: process, request, suite: suite), "\(keyword) \(fields.described(skipping: "in")) in \(process)")
        } write: {
            guard case .command(let process, let request, let suite) = $0, let written = write(request) else { return nil }
            return .mapping([("in", YAMLText.scalar(process))] + written + [suiteField(suite)])
        }
    }

    /// Which suite of an `exec:` process a value step or check goes through.
    static let suiteField = StepField.optional(
        "suite", .text,
        "an `exec:` process's `UserDefaults(suiteName:)`; `standard` for `.standard`; default: its target's app group when it has exactly one")

    /// `suite:` as written (nothing for the process's default).
    static func suiteField(_ suite: SuiteChoice) -> (String, String)? {
        switch suite {
        case .processDefault: nil
        case .standard: ("suite", YAMLText.scalar(SuiteChoice.standardName))
        case .named(let name): ("suite", YAMLText.scalar(name))
        }
    }

    /// A request that takes only the process: `synchronize: app`, or `synchronize: { in: app, suite: standard }`.
    static func request(
        _ keyword: String, of shorthand: String = "a process name", takesSuite: Bool = true, does: String, examples: [String], _ request: AppRequest
    ) -> StepSpec {
        StepSpec(
            keyword, shorthand: shorthand, fields: takesSuite ? [.required("in", .process), suiteField] : [], does: does, examples: examples
        ) { input in
            guard input.isMapping else { return (.command(process: try input.process(), request), "\(keyword) \(try input.process())") }
            let fields = try input.fields()
            let process = try fields.process("in")
            return (.command(process: process, request, suite: try input.context.suite(of: process, fields.nodes["suite"])), "\(keyword) \(process)")
        } write: {
            guard case .command(let process, let written, let suite) = $0, written == request else { return nil }
            return suite == .processDefault ? .scalar(process) : .mapping([("in", YAMLText.scalar(process)), suiteField(suite)])
        }
    }

    static let defaultsSteps: [StepSpec] = [
        request(
            "set", [.required("key"), .required("value", .value)], does: "`set` in that process",
            examples: [
                "{ in: app, key: theme, value: dark }", "{ in: program, key: count, value: 3, suite: standard }",
                "{ in: app, key: theme, value: dark, exits: { status: 134, error: raised } }",
            ]
        ) {
            .set(key: try $0.node("key").string(), value: try $0.node("value").plistValue())
        } write: {
            guard case .set(let key, let value) = $0 else { return nil }
            return [("key", YAMLText.scalar(key)), ("value", YAMLText.value(value))]
        },
        request(
            "remove", [.required("key")], does: "`removeObject`",
            examples: [
                "{ in: app, key: theme }", "{ in: program, key: theme, suite: group.other }",
                "{ in: app, key: theme, exits: { status: 134, error: raised } }",
            ]
        ) {
            .remove(key: try $0.node("key").string())
        } write: {
            guard case .remove(let key) = $0 else { return nil }
            return [("key", YAMLText.scalar(key))]
        },
        request(
            "register", [.required("defaults", .mapping)], does: "`register(defaults:)` in that process only",
            examples: [
                "{ in: app, defaults: { fontSize: 12, theme: light } }", "{ in: program, defaults: {}, suite: standard }",
                "{ in: app, defaults: { fontSize: 12, theme: light }, exits: { status: 134, error: raised } }",
            ]
        ) {
            .register(defaults: try $0.node("defaults").plistDictionary())
        } write: {
            guard case .register(let defaults) = $0 else { return nil }
            return [("defaults", YAMLText.value(.dictionary(defaults)))]
        },
        request(
            "add-suite", [.required("name")],
            does: "`addSuite(named:)`: just below the process's own suite, so the suite added last is searched first",
            examples: [
                "{ in: app, name: group.com.example.shared }", "{ in: program, name: group.com.example.shared, suite: group.other }",
                "{ in: app, name: group.com.example.shared, exits: { status: 134, error: raised } }",
            ]
        ) {
            .addSuite(name: try $0.node("name").string())
        } write: {
            guard case .addSuite(let name) = $0 else { return nil }
            return [("name", YAMLText.scalar(name))]
        },
        request(
            "remove-suite", [.required("name")], does: "`removeSuite(named:)`",
            examples: [
                "{ in: app, name: group.com.example.shared }", "{ in: program, name: a.b, suite: standard }",
                "{ in: app, name: group.com.example.shared, exits: { status: 134, error: raised } }",
            ]
        ) {
            .removeSuite(name: try $0.node("name").string())
        } write: {
            guard case .removeSuite(let name) = $0 else { return nil }
            return [("name", YAMLText.scalar(name))]
        },
        request(
            "increment", [.required("key"), .optional("by", .integer, "default 1")], does: "atomic read-modify-write across processes",
            examples: [
                "{ in: app, key: count }", "{ in: program, key: count, by: -9223372036854775808, suite: standard }",
                "{ in: app, key: count, exits: { status: 134, error: raised } }",
            ]
        ) {
            .increment(key: try $0.node("key").string(), by: Int64(try $0.number("by") ?? 1))
        } write: {
            guard case .increment(let key, let by) = $0 else { return nil }
            return [("key", YAMLText.scalar(key)), ("by", "\(by)")]
        },
        request(
            "append", [.required("key"), .required("value", .value)], does: "atomic append to an array",
            examples: [
                "{ in: app, key: notes, value: milk }", "{ in: program, key: notes, value: [1, [2]], suite: standard }",
                "{ in: app, key: notes, value: milk, exits: { status: 134, error: raised } }",
            ]
        ) {
            // The value becomes an item of the array: one level less is left for it.
            .append(key: try $0.node("key").string(), values: [try $0.node("value").plistValue(maximumDepth: PlistLimits.maximumDepth - 1)])
        } write: {
            guard case .append(let key, let values) = $0, values.count == 1 else { return nil }
            return [("key", YAMLText.scalar(key)), ("value", YAMLText.value(values[0]))]
        },
        request(
            "merge", [.required("key"), .required("value", .mapping)], does: "atomic merge of entries into a dictionary value",
            examples: [
                "{ in: app, key: settings, value: { a: 1, b: [x] } }", "{ in: program, key: s, value: {}, suite: standard }",
                "{ in: app, key: settings, value: { a: 1, b: [x] }, exits: { status: 134, error: raised } }",
            ]
        ) {
            .mergeDictionary(key: try $0.node("key").string(), entries: try $0.node("value").plistDictionary())
        } write: {
            guard case .mergeDictionary(let key, let entries) = $0 else { return nil }
            return [("key", YAMLText.scalar(key)), ("value", YAMLText.value(.dictionary(entries)))]
        },
        request(
            "clear", does: "`removePersistentDomain` of its suite: every key goes (registered defaults show again)",
            examples: ["app", "{ in: program, suite: standard }", "{ in: app }"], .clear),
        request(
            "synchronize", does: "returns once its writes are on disk (its iCloud store's writes too: in the device's copy)",
            examples: ["app", "{ in: program, suite: group.other }"], .synchronize),
        StepSpec(
            "reload", shorthand: "a process name (a widget)", does: "reloads the widget's timeline (it renders; your own asks its provider)",
            examples: ["widget"]
        ) { input in
            let process = try input.process()
            guard input.context.processes[process]!.role == .widget else {
                throw input.body.error("'reload' reloads a widget's timeline; \(process) is not a widget (an exec: process needs target: widget)")
            }
            try input.context.requireControl(process, at: input.body, for: "'reload'")
            return (.command(process: process, .reloadTimeline), "reload \(process)")
        } write: {
            guard case .command(let process, .reloadTimeline, _) = $0 else { return nil }
            return .scalar(process)
        },
        request(
            "reload-widgets", of: "a process name (the app)", takesSuite: false, does: "asks WidgetCenter to reload every widget",
            examples: ["app"], .reloadWidgets),
        StepSpec(
            "burst",
            fields: [
                .required("in", .process), .required("count", count), .required("key", .text, "may contain `{i}`"),
                .optional("value", .value, "may be `{i}`, then the integer i"), .optional("sync-every", count),
                .optional("kvs", .flag, "`true`: to the iCloud store"), .optional("background", .flag, "`true`: the next steps run while it does"),
                .optional("pace-ms", .number(1...10_000), "one set every that many ms, as a person tapping (not with `background`)"),
                .optional(
                    "simulated-pace", .flag,
                    "`true`: each pause moves the device's simulated clock on by `pace-ms` instead of waiting (`advance-clock`)"),
                .optional("remove", .flag, "`true`: removes the keys instead (no `value`)"),
            ],
            does:
                "sends `count` sets (or removals) without waiting (or paced), with a synchronize every `sync-every` sets; acknowledged synchronizes are remembered for "
                + "`expect: { acknowledged: … }`. Waits for all responses unless a later `kill` cuts it short",
            examples: [
                "{ in: app, count: 100, key: \"k{i}\", sync-every: 10, background: true }",
                "{ in: app, count: 3, key: n, value: \"{i}\", pace-ms: 5 }",
                "{ in: app, count: 3, key: n, pace-ms: 2000, simulated-pace: true }",
                "{ in: app, count: 2, key: \"c{i}\", value: x, kvs: true }", "{ in: app, count: 2, key: \"c{i}\", remove: true }",
            ],
            read: ScenarioParser.readBurst, write: ScenarioParser.writeBurst),
        StepSpec(
            "wait-burst", shorthand: "a process name", does: "waits until the answers of its background burst are in", examples: ["app"]
        ) { input in
            let process = try input.process()
            return (.waitBurst(process), "wait for \(process)'s burst")
        } write: {
            guard case .waitBurst(let process) = $0 else { return nil }
            return .scalar(process)
        },
        request(
            "set-data", [.required("key"), .required("bytes", .number(1...PlistLimits.maximumFileSize / 2), "how many bytes of data")],
            does: "`set` of a data value of that many bytes (an app caching data in its defaults; see the platform's size limits)",
            examples: [
                "{ in: app, key: cache, bytes: 4 }", "{ in: program, key: cache, bytes: 1, suite: standard }",
                "{ in: app, key: cache, bytes: 4, exits: { status: 134, error: raised } }",
            ]
        ) {
            .set(key: try $0.node("key").string(), value: .data(Data(repeating: 0x2A, count: try $0.number("bytes") ?? 1)))
        } write: { _ in
            // Written as the `set` of its data value, which reads back the same.
            nil
        },
    ]
}

extension ScenarioParser {
    @Sendable static func readBurst(_ input: StepInput) throws -> (Step.Action, String) {
        let fields = try input.fields()
        let process = try fields.process("in")
        let count = try fields.number("count")!
        var value: PlistValue? = nil
        if let node = fields["value"], (try? node.string()) != "{i}" { value = try node.plistValue() }
        let syncEvery = try fields.number("sync-every")
        var burst = Burst(
            process: process, count: count, keyTemplate: try fields.node("key").string(), value: value, syncEvery: syncEvery, waitForResponses: true)
        burst.cloud = try fields.flag("kvs") ?? false
        burst.background = try fields.flag("background") ?? false
        if let pace = try fields.number("pace-ms") {
            burst.paceMilliseconds = pace
            if burst.background { throw fields.node("pace-ms").error("a paced burst runs within its step; leave out either pace-ms or background") }
        }
        burst.simulatedPace = try fields.flag("simulated-pace") ?? false
        if burst.simulatedPace, burst.paceMilliseconds == nil {
            throw fields.node("simulated-pace").error("simulated-pace moves the device's clock on by the burst's pace; give pace-ms too")
        }
        if burst.cloud && syncEvery != nil {
            throw fields.node("sync-every").error("sync-every goes with defaults bursts; an iCloud write is on the device when it returns")
        }
        burst.removes = try fields.flag("remove") ?? false
        if burst.removes, fields["value"] != nil { throw fields.node("value").error("a burst that removes its keys sets no value; leave out value") }
        return (
            .burst(burst),
            "burst of \(count) \(burst.cloud ? "iCloud " : "")\(burst.removes ? "removals" : "sets") in \(process)"
                + (burst.simulatedPace ? ", paced on its device's clock" : "")
        )
    }

    @Sendable static func writeBurst(_ action: Step.Action) -> StepSpec.Written? {
        guard case .burst(let burst) = action else { return nil }
        return .mapping([
            ("in", YAMLText.scalar(burst.process)), ("count", "\(burst.count)"), ("key", YAMLText.scalar(burst.keyTemplate)),
            burst.value.map { ("value", YAMLText.value($0)) }, burst.syncEvery.map { ("sync-every", "\($0)") }, burst.cloud ? ("kvs", "true") : nil,
            burst.background ? ("background", "true") : nil, burst.paceMilliseconds.map { ("pace-ms", "\($0)") },
            burst.simulatedPace ? ("simulated-pace", "true") : nil, burst.removes ? ("remove", "true") : nil,
        ])
    }
}
