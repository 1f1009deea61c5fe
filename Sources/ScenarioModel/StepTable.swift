import AppModel
import AppProtocol
import DeviceState
import Foundation
import GroupDefaults
import PropertyList
import SpecFormat

/// Every step a scenario may take, one declaration each, in the order of
/// the docs' table: the one place a step's name, forms, fields, ranges and
/// description are written.
package enum StepGrammar {
    package static let all: [StepSpec] = processSteps + defaultsSteps + toolSteps + waitSteps + faultSteps + cloudSteps + flowSteps

    static let byKeyword = Dictionary(uniqueKeysWithValues: all.map { ($0.keyword, $0) })

    package static var keywords: [String] { all.map(\.keyword) }

    static func spec(_ keyword: String) -> StepSpec? { byKeyword[keyword] }

    /// How long a `send` waits for the process to take its line, once its stdin pipe is full.
    package static let sendTimeout: Double = 10

    static let status = StepField.Kind.number(ControlProtocol.exitStatusRange)
    /// A failed launch's status: any but 0.
    static let failureStatus = StepField.Kind.number(1...ControlProtocol.exitStatusRange.upperBound)
    static let count = StepField.Kind.number(1...ScenarioParser.maximumCount)

    // MARK: Processes

    static let processSteps: [StepSpec] = [
        StepSpec(
            "launch", shorthand: "a process name or a list of them",
            fields: [
                .required("process", .process), .required("fails", .text, "text its error must say"),
                .optional("status", failureStatus, "default 1"),
            ],
            does: "starts them and waits until each answers a request (fully started: a widget's timeline listens); "
                + "with `fails`, the launch must fail: the process exits with `status` without coming up, and its error says the text"
        ) { input in
            if input.isMapping {
                let fields = try input.fields()
                let process = try fields.process("process")
                let status = Int32(try fields.number("status") ?? 1)
                return (
                    .launchFails(process: process, message: try fields.node("fails").string(), status: status), "launch \(process), which must fail"
                )
            }
            let names = try input.body.listOrSingle().map { try input.context.process($0) }
            return (.launch(names), "launch \(names.joined(separator: ", "))")
        },
        StepSpec(
            "restart", shorthand: "a process name", fields: [.required("process", .process), .optional("args", .words)],
            does: "ends it cleanly (stdin closed) if it runs, and starts it again — also after it exited or was killed: "
                + "with the declared `args` if none are given, with none for `args: []`"
        ) { input in
            if input.isScalar {
                let process = try input.process()
                return (.restart(process: process, arguments: nil), "restart \(process)")
            }
            let fields = try input.fields()
            let process = try fields.process("process")
            let arguments = try fields.words("args")
            return (
                .restart(process: process, arguments: arguments),
                "restart \(process)" + (arguments.map { " with \($0.joined(separator: " "))" } ?? "")
            )
        },
        StepSpec("quit", shorthand: "a process name", does: "closes its stdin: it commits and exits 0") { input in
            let process = try input.process()
            return (.quit(process), "quit \(process)")
        },
        StepSpec(
            "send", fields: [.required("to", .process), .required("line", .text, "written with a newline; none in it")],
            does: "writes a line to the process's stdin (an interactive tool reads it); a built-in role reads its stdin as the control protocol. "
                + "Fails if the process has not taken it within \(Int(sendTimeout)) s (it is suspended, or does not read, and its pipe is full)"
        ) { input in
            let fields = try input.fields()
            let process = try fields.process("to")
            let lineNode = fields.node("line")
            let line = try lineNode.string()
            // The runner adds the one newline: a line of its own must not end or break it.
            if line.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) {
                throw lineNode.error(
                    "a sent line has no newline or carriage return in it (the runner ends it with one); send each line with a send step of its own")
            }
            return (.send(process: process, line: line), "send \(PlistJSON.quote(line)) to \(process)")
        },
        StepSpec(
            "intent",
            fields: [
                .required("name"), .optional("params", .mapping), .optional("device", .device),
                .optional("in", .process, "a process that runs your App Intents (see below)"),
                .optional("status", status, "expected exit status of a one-shot, default 0 (with `error`: any but 0)"), .optional("args", .words),
                .optional("result", .value, "the value it must report (stored, for the built-in intents); `~` for absent"),
                .optional("dialog", .text, "the dialog an App Intent must return, whole"),
                .optional("error", .text, "the intent must fail, saying this text"),
            ],
            does: "runs the intent extension once and waits for it to exit; with the manifest's `intents: in-app` and no `status` or `args`, "
                + "performs it in the device's main-app process instead (`perform-intent`), launching that in the background if it is not running. "
                + "With `in`: an `exec:` process with `target: intent` is run once with the intent's name and params, and waited for; "
                + "another with a control channel performs it in its running program (`perform-intent`), launched first if it is not running",
            read: ScenarioParser.readIntent),
    ]

    // MARK: The defaults API

    /// A request to a process: `{ in: PROCESS, … }`, summarised as "set key=… value=… in app".
    static func request(
        _ keyword: String, _ fields: [StepField], does: String,
        _ make: @escaping @Sendable (StepFields) throws -> AppRequest
    ) -> StepSpec {
        StepSpec(keyword, fields: [.required("in", .process)] + fields + [suiteField], does: does) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let request = try make(fields)
            let suite = try input.context.suite(of: process, fields.nodes["suite"])
            return (.command(process: process, request, suite: suite), "\(keyword) \(fields.described(skipping: "in")) in \(process)")
        }
    }

    /// Which suite of an `exec:` process a value step or check goes through.
    static let suiteField = StepField.optional(
        "suite", .text,
        "an `exec:` process's `UserDefaults(suiteName:)`; `standard` for `.standard`; default: its target's app group when it has exactly one")

    /// A request that takes only the process: `synchronize: app`, or `synchronize: { in: app, suite: standard }`.
    static func request(
        _ keyword: String, of shorthand: String = "a process name", takesSuite: Bool = true, does: String, _ request: AppRequest
    ) -> StepSpec {
        StepSpec(keyword, shorthand: shorthand, fields: takesSuite ? [.required("in", .process), suiteField] : [], does: does) { input in
            guard input.isMapping else { return (.command(process: try input.process(), request), "\(keyword) \(try input.process())") }
            let fields = try input.fields()
            let process = try fields.process("in")
            return (.command(process: process, request, suite: try input.context.suite(of: process, fields.nodes["suite"])), "\(keyword) \(process)")
        }
    }

    static let defaultsSteps: [StepSpec] = [
        request("set", [.required("key"), .required("value", .value)], does: "`set` in that process") {
            .set(key: try $0.node("key").string(), value: try $0.node("value").plistValue())
        },
        request("remove", [.required("key")], does: "`removeObject`") { .remove(key: try $0.node("key").string()) },
        request("register", [.required("defaults", .mapping)], does: "`register(defaults:)` in that process only") {
            .register(defaults: try $0.node("defaults").plistDictionary())
        },
        request(
            "add-suite", [.required("name")],
            does: "`addSuite(named:)`: just below the process's own suite, so the suite added last is searched first"
        ) {
            .addSuite(name: try $0.node("name").string())
        },
        request("remove-suite", [.required("name")], does: "`removeSuite(named:)`") { .removeSuite(name: try $0.node("name").string()) },
        request("increment", [.required("key"), .optional("by", .integer, "default 1")], does: "atomic read-modify-write across processes") {
            .increment(key: try $0.node("key").string(), by: Int64(try $0.number("by") ?? 1))
        },
        request("append", [.required("key"), .required("value", .value)], does: "atomic append to an array") {
            // The value becomes an item of the array: one level less is left for it.
            .append(key: try $0.node("key").string(), values: [try $0.node("value").plistValue(maximumDepth: PlistLimits.maximumDepth - 1)])
        },
        request("merge", [.required("key"), .required("value", .mapping)], does: "atomic merge of entries into a dictionary value") {
            .mergeDictionary(key: try $0.node("key").string(), entries: try $0.node("value").plistDictionary())
        },
        request("clear", does: "`removePersistentDomain` of its suite: every key goes (registered defaults show again)", .clear),
        request("synchronize", does: "returns once its writes are on disk (its iCloud store's writes too: in the device's copy)", .synchronize),
        StepSpec("reload", shorthand: "a process name (a widget)", does: "reloads the widget's timeline (it renders; your own asks its provider)") {
            input in
            let process = try input.process()
            guard input.context.processes[process]!.role == .widget else {
                throw input.body.error("'reload' reloads a widget's timeline; \(process) is not a widget (an exec: process needs target: widget)")
            }
            try input.context.requireControl(process, at: input.body, for: "'reload'")
            return (.command(process: process, .reloadTimeline), "reload \(process)")
        },
        request(
            "reload-widgets", of: "a process name (the app)", takesSuite: false, does: "asks WidgetCenter to reload every widget", .reloadWidgets),
        StepSpec(
            "burst",
            fields: [
                .required("in", .process), .required("count", count), .required("key", .text, "may contain `{i}`"),
                .optional("value", .value, "may be `{i}`, then the integer i"), .optional("sync-every", count),
                .optional("kvs", .flag, "`true`: to the iCloud store"), .optional("background", .flag, "`true`: the next steps run while it does"),
                .optional("pace-ms", .number(1...10_000), "one set every that many ms, as a person tapping (not with `background`)"),
                .optional("remove", .flag, "`true`: removes the keys instead (no `value`)"),
            ],
            does:
                "sends `count` sets (or removals) without waiting (or paced), with a synchronize every `sync-every` sets; acknowledged synchronizes are remembered for "
                + "`expect: { acknowledged: … }`. Waits for all responses unless a later `kill` cuts it short", read: ScenarioParser.readBurst),
        StepSpec("wait-burst", shorthand: "a process name", does: "waits until the answers of its background burst are in") { input in
            let process = try input.process()
            return (.waitBurst(process), "wait for \(process)'s burst")
        },
        request(
            "set-data", [.required("key"), .required("bytes", .number(1...PlistLimits.maximumFileSize / 2), "how many bytes of data")],
            does: "`set` of a data value of that many bytes (an app caching data in its defaults; see the platform's size limits)"
        ) {
            .set(key: try $0.node("key").string(), value: .data(Data(repeating: 0x2A, count: try $0.number("bytes") ?? 1)))
        },
    ]

    // MARK: Outside tools

    /// `defaults` and `run`: a list of words, or `{ args, status, output }`.
    static func tool(
        _ keyword: String, shorthand: String, does: String, needsCommand: Bool,
        _ make: @escaping @Sendable ([String], Int32, String?) -> Step.Action
    ) -> StepSpec {
        StepSpec(
            keyword, shorthand: shorthand,
            fields: [
                .required("args", .words), .optional("status", status, "default 0"), .optional("output", .text, "text its stdout must contain"),
            ], does: does
        ) { input in
            if input.isList {
                let words = try input.body.strings()
                if needsCommand, words.isEmpty { throw input.body.error("run needs a command, e.g. run: [python3, check.py]") }
                return (make(words, 0, nil), "\(keyword) \(words.joined(separator: " "))")
            }
            let fields = try input.fields()
            let words = try fields.node("args").strings()
            if needsCommand, words.isEmpty { throw fields.node("args").error("run needs a command, e.g. args: [python3, check.py]") }
            return (make(words, Int32(try fields.number("status") ?? 0), try fields.text("output")), "\(keyword) \(words.joined(separator: " "))")
        }
    }

    static let toolSteps: [StepSpec] = [
        tool(
            "defaults", shorthand: "a list of words",
            does: "runs `groupsim defaults WORDS…` against the scenario's root (an outside writer), in the scenario file's folder "
                + "(so `import data.plist` reads the file beside it); `output` is what `read`, `read-type` or `export … -` printed",
            needsCommand: false
        ) { .defaults(arguments: $0, status: $1, output: $2) },
        tool(
            "run", shorthand: "a command as a list of words",
            does: "runs a command for its verdict (say, a script that checks the files with another tool), in the scenario file's folder "
                + "with `GROUPSIM_ROOT` and `GROUPSIM_DEVICE` set, and the runner's own executables' folder in `GROUPSIM_BINARIES` and first on `PATH` (`groupsim` is the runner's); a bare name is looked up there, a path is taken from that folder. "
                + "Its status must be `status`; its output, and stderr, are in the report. It leads a process group of its own, as an "
                + "`exec:` process does: what it leaves running ends when it ends",
            needsCommand: true
        ) { .run(arguments: $0, status: $1, output: $2) },
    ]

    // MARK: Waiting

    static let waitSteps: [StepSpec] = [
        StepSpec(
            "wait",
            fields: [
                .required("for", .text, "an event"), .required("in", .process),
                .optional("timeout", .seconds, "default \(Int(ScenarioParser.defaultWait))"),
            ],
            takesFilters: true, does: "waits for an event in that process (see below)"
        ) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let matcher = try input.context.matcher(fields.nodes, eventNode: fields.node("for"), in: process)
            let timeout = try fields.seconds("timeout") ?? ScenarioParser.defaultWait
            return (.wait(process: process, matcher: matcher, timeout: timeout), "wait for \(matcher) in \(process)")
        },
        StepSpec(
            "quiet", fields: [.required("for", .text, "an event"), .required("in", .process), .required("seconds", .seconds)],
            takesFilters: true,
            does: "nothing matching may happen in that process from the start of the step before it (so what that step "
                + "caused counts, however soon it came; an event a `wait` matched does not) until `seconds` from now (a "
                + "suspended widget must not render); the one step that always takes its whole time"
        ) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let matcher = try input.context.matcher(fields.nodes, eventNode: fields.node("for"), in: process)
            let seconds = try fields.seconds("seconds")!
            return (.quiet(process: process, matcher: matcher, seconds: seconds), "no \(matcher) in \(process) for \(seconds) s")
        },
    ]

    // MARK: Faults

    static let faultSteps: [StepSpec] = [
        StepSpec(
            "kill", shorthand: "a process name",
            fields: [
                .required("process", .process), .optional("signal", .text, "KILL, TERM, INT, STOP or CONT; default KILL"),
                .optional("after-acks", .number(0...ScenarioParser.maximumCount)),
            ], does: "sends a signal; `after-acks: N` first waits until N of its burst's synchronizes were acknowledged"
        ) { input in
            if input.isScalar {
                let process = try input.process()
                return (.kill(process: process, signal: SIGKILL, afterAcks: nil), "kill \(process)")
            }
            let fields = try input.fields()
            let process = try fields.process("process")
            let signal = try ScenarioParser.parseSignal(fields["signal"])
            return (
                .kill(process: process, signal: signal, afterAcks: try fields.number("after-acks")),
                "kill -\(ScenarioParser.signalName(signal)) \(process)"
            )
        },
        StepSpec("suspend", shorthand: "a process name", does: "SIGSTOP (a suspended extension)") { input in
            let process = try input.process()
            return (.suspend(process), "suspend \(process)")
        },
        StepSpec("resume", shorthand: "a process name", does: "SIGCONT") { input in
            let process = try input.process()
            return (.resume(process), "resume \(process)")
        },
        StepSpec(
            "corrupt", fields: [.required("domain"), .optional("device", .device), .optional("content")],
            does: "replaces a domain's plist with bytes that are not a property list"
        ) { input in
            let fields = try input.fields()
            let domain = try fields.node("domain").string()
            return (
                .corrupt(domain: domain, device: try fields.device("device"), content: try fields.text("content") ?? ScenarioParser.notAPropertyList),
                "corrupt \(domain)"
            )
        },
        StepSpec("delete-file", fields: [.required("domain"), .optional("device", .device)], does: "deletes a domain's plist") { input in
            let fields = try input.fields()
            let domain = try fields.node("domain").string()
            return (.deleteFile(domain: domain, device: try fields.device("device")), "delete the file of \(domain)")
        },
        StepSpec("erase-device", shorthand: "a device name", does: "erases every container and preference on it (processes keep running)") { input in
            let device = try input.device()
            return (.eraseDevice(device), "erase \(device)")
        },
        StepSpec(
            "managed",
            fields: [
                .optional("device", .device), .optional("app", .text, "a bundle id of the app's targets"),
                .optional("suite", .text, "instead of `app`: an app group of the app's targets, whose suite's domain is managed"),
                .optional("key"), .optional("value", .value, "with `key`: forces it"), .optional("remove", .text, "a key: no longer forced"),
                .optional("config", .mapping, "the managed app configuration, whole (an app's only)"),
            ],
            does: "an administrator (MDM) changes the managed preferences of an app's domain, or of an app group's (`suite`), on the "
                + "device (`groupsim device managed`): exactly one of `key` with `value`, `remove` or `config`; running processes "
                + "whose instances read that domain see it at once",
            read: ScenarioParser.readManaged),
        StepSpec(
            "reboot", shorthand: "a device name",
            fields: [
                .optional("device", .device),
                .optional("protection", .text, "until-first-unlock (default, iOS's) or none (the protection switched off)"),
            ],
            does: "the device restarts (the scenario's processes running on it end, saving what they wrote) and stays locked until "
                + "`unlock`: a process launched meanwhile (any role) reads its preferences "
                + "as absent and keeps that view until relaunched; what it writes replaces the user's values of those keys (`groupsim device reboot`)",
            read: ScenarioParser.readReboot),
        StepSpec(
            "unlock", shorthand: "a device name", fields: [.optional("device", .device)],
            does: "the person's first unlock after a reboot: processes opening their preferences from now on read them; "
                + "an app waiting for protected data (manifest `protected-data: wait-for-unlock`) goes on (`groupsim device unlock`)"
        ) { input in
            let device = input.isScalar ? try input.device() : try input.fields().device("device")
            return (.unlock(device: device), "unlock " + (device ?? "the device"))
        },
        StepSpec(
            "prewarm", shorthand: "a process name (a built-in role)",
            does: "the system launches it ahead of time (`--prewarm`; its ready info says `launch: prewarm`), maybe before the first unlock; "
                + "nothing waits for it to come up (`wait: { for: ready }` does)"
        ) { input in
            let process = try input.process()
            if input.context.processes[process]?.executable != nil {
                throw input.body.error("prewarm launches a built-in role; '\(process)' runs an exec: executable (launch it instead)")
            }
            return (.prewarm(process), "prewarm \(process)")
        },
        StepSpec(
            "advance-clock", shorthand: "a duration (the default device)",
            fields: [.optional("device", .device), .required("by", .text, "a duration: 30s, 90m, 6h, 1d; at most 366d")],
            does: "moves the device's simulated clock forward at once (no waiting), as every process of the device sees it; "
                + "a reload deferred past a widget's daily budget comes when the clock reaches the next day",
            read: ScenarioParser.readAdvanceClock),
        StepSpec(
            "edit-file",
            fields: [
                .required("domain"), .optional("device", .device), .required("key"), .optional("value", .value),
                .optional("absent", .flag, "`true`: removes the key"),
            ],
            does: "edits a domain's plist directly, in place and without the store's lock (a text editor, PlistBuddy): exactly one of "
                + "`value` or `absent: true`. On a device with `preferences-cache` its running processes never see it"
        ) { input in
            let fields = try input.fields()
            let domain = try fields.node("domain").string()
            let key = try fields.node("key").string()
            let removes = try fields.flag("absent") == true
            guard removes != (fields.nodes["value"] != nil) else {
                throw input.body.error("edit-file needs exactly one of 'value' or 'absent: true'")
            }
            let value = removes ? nil : try fields.node("value").plistValue()
            let device = try fields.device("device")
            return (
                .editFile(domain: domain, device: device, key: key, value: value),
                "edit the file of \(domain) on \(device ?? input.context.devices.first ?? "iPhone") by hand: \(key) = \(value.map { PlistJSON.encode($0) } ?? "absent")"
            )
        },
    ]

    // MARK: Structure

    static let flowSteps: [StepSpec] = [
        StepSpec("parallel", shorthand: "a list of steps", does: "runs them at the same time and waits for all") { input in
            let steps = try input.body.list().map { try ScenarioParser.parseStep($0, input.context) }
            return (.parallel(steps), "parallel: " + steps.map(\.summary).joined(separator: " | "))
        },
        StepSpec(
            "repeat", fields: [.required("times", .number(1...ScenarioParser.maximumRepeatedSteps)), .required("steps", .steps)],
            does: "runs the steps in order, that many times over (40 widget reloads in one step); a failure names the round"
        ) { input in
            let fields = try input.fields()
            let times = try fields.number("times")!
            let steps = try fields.node("steps").list().map { try ScenarioParser.parseStep($0, input.context) }
            guard !steps.isEmpty else { throw fields.node("steps").error("'steps' lists the steps to repeat; found none") }
            let (total, overflow) = times.multipliedReportingOverflow(by: steps.map(\.action.stepsRun).reduce(0, +))
            guard !overflow, total <= ScenarioParser.maximumRepeatedSteps else {
                throw input.body.error(
                    "repeat runs \(total) steps (\(times) times \(steps.count), nested repeats multiplied); at most \(ScenarioParser.maximumRepeatedSteps)"
                )
            }
            return (.repeated(times: times, steps), "repeat \(times) times: " + steps.map(\.summary).joined(separator: "; "))
        },
        StepSpec("expect", shorthand: "a check or a list of them (see below)", does: "checks state; a failed check fails the scenario") { input in
            let checks = try input.body.listOrSingle().map { LocatedCheck(check: try ScenarioParser.parseCheck($0, input.context), line: $0.line) }
            return (.expect(checks), "expect")
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
        if burst.cloud && syncEvery != nil {
            throw fields.node("sync-every").error("sync-every goes with defaults bursts; an iCloud write is on the device when it returns")
        }
        burst.removes = try fields.flag("remove") ?? false
        if burst.removes, fields["value"] != nil { throw fields.node("value").error("a burst that removes its keys sets no value; leave out value") }
        return (.burst(burst), "burst of \(count) \(burst.cloud ? "iCloud " : "")\(burst.removes ? "removals" : "sets") in \(process)")
    }

    @Sendable static func readReboot(_ input: StepInput) throws -> (Step.Action, String) {
        if input.isScalar {
            let device = try input.device()
            return (.reboot(device: device, protection: .untilFirstUnlock), "reboot \(device)")
        }
        let fields = try input.fields()
        let device = try fields.device("device")
        var protection = ProtectedData.Protection.untilFirstUnlock
        if let node = fields["protection"] {
            let name = try node.string()
            guard let chosen = ProtectedData.Protection(rawValue: name) else {
                throw node.error("protection must be \(ProtectedData.Protection.allCases.map(\.rawValue).joined(separator: " or ")), found '\(name)'")
            }
            protection = chosen
        }
        return (.reboot(device: device, protection: protection), "reboot " + (device ?? "the device") + " (data protection \(protection.rawValue))")
    }

    @Sendable static func readAdvanceClock(_ input: StepInput) throws -> (Step.Action, String) {
        var (device, byNode): (String?, SpecNode) = (nil, input.body)
        if !input.isScalar {
            let fields = try input.fields()
            (device, byNode) = (try fields.device("device"), fields.node("by"))
        }
        let text = try byNode.string()
        guard let seconds = DeviceClock.parseDuration(text), seconds > 0, seconds <= DeviceClock.longestAdvance else {
            throw byNode.error(DeviceClock.durationError(text, what: "advance-clock's 'by'"))
        }
        return (.advanceClock(device: device, seconds: seconds), "advance the clock by \(text)" + (device.map { " on \($0)" } ?? ""))
    }
}
