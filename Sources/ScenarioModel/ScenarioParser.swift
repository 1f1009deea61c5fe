import AppModel
import AppProtocol
import Foundation
import GroupDefaults
import PropertyList
import SpecFormat
import Yams

/// Reads and checks a scenario file; every error names the file, line and
/// what was expected, and nothing runs until every file is valid.
package enum ScenarioParser {
    /// The longest `wait` timeout, in seconds: a wait always ends, and its deadline is a date that exists.
    package static let maximumWait: Double = 3600
    /// The largest count a step takes (burst sizes, synchronize intervals, acknowledged synchronizes, event counts).
    package static let maximumCount = 100_000
    /// The most steps a file's `repeat`s may make it run (nested ones multiply).
    package static let maximumRepeatedSteps = 100_000
    /// How long a `wait` waits when the step gives no `timeout`, in seconds.
    package static let defaultWait: Double = 10
    /// How long `wait-cloud` waits for the devices and the cloud to agree when it gives no `timeout`.
    package static let defaultCloudWait: Double = 20
    /// What `corrupt` writes when the step gives no `content`.
    package static let notAPropertyList = "this is not a property list"

    /// Reads and parses the scenario file at `path`; what it names beyond
    /// itself (executables, an app manifest) is looked up in `fileSystem`.
    package static func load(_ path: String, fileSystem: any ScenarioFileSystem) throws -> Scenario {
        try parse(SpecNode.load(path), fileSystem: fileSystem)
    }

    /// Parses scenario text as if read from `file` (which names it in errors
    /// and is where a relative `app:` or `exec:` path is looked up, in
    /// `fileSystem`); nothing is written.
    package static func parse(_ text: String, file: String, fileSystem: any ScenarioFileSystem) throws -> Scenario {
        try parse(SpecNode.parse(text, file: file), fileSystem: fileSystem)
    }

    package static func parse(_ root: SpecNode, fileSystem: any ScenarioFileSystem) throws -> Scenario {
        let fields = try root.fields(
            allowed: ["name", "summary", "tags", "app", "devices", "processes", "steps"],
            required: ["summary", "steps"])
        let fileName = ((root.file as NSString).lastPathComponent as NSString).deletingPathExtension
        let (app, appSource) = try parseApp(fields["app"], file: root.file, fileSystem: fileSystem)
        let deviceSpecs = try parseDevices(fields["devices"])
        let devices = deviceSpecs.map(\.name)
        var processes: [String: ProcessSpec] = [:]
        for (name, node) in try fields["processes"]?.entries() ?? [] {
            processes[name] = try parseProcess(name, node, app: app, devices: devices, file: root.file, fileSystem: fileSystem)
        }
        let context = Context(processes: processes, devices: devices, app: app)
        var steps = try fields["steps"]!.list().map { try parseStep($0, context) }
        steps = markBurstsCutShort(steps)
        return Scenario(
            name: try fields["name"]?.string() ?? fileName, summary: try fields["summary"]!.string(), file: root.file,
            tags: try fields["tags"]?.strings() ?? [], app: app, appSource: appSource, devices: devices, deviceSpecs: deviceSpecs,
            processes: processes, steps: steps)
    }

    struct Context {
        let processes: [String: ProcessSpec]
        let devices: [String]
        let app: AppManifest

        func process(_ node: SpecNode) throws -> String {
            let name = try node.string()
            guard processes[name] != nil else {
                throw node.error("unknown process '\(name)'; declared: \(processes.keys.sorted().joined(separator: ", "))")
            }
            return name
        }

        /// `suite:` of a value step or check of `process`, as written (`Scenario.suiteName` resolves it). A
        /// built-in role has its manifest's suite and takes none.
        func suite(of process: String, _ node: SpecNode?) throws -> SuiteChoice {
            guard let node else { return .processDefault }
            guard processes[process]?.executable != nil else {
                throw node.error("'suite' is for an exec: process; \(process) reads and writes its manifest's suite")
            }
            let name = try node.string()
            guard !name.isEmpty else { throw node.error("'suite' names a suite (or 'standard' for UserDefaults.standard), found ''") }
            return name == SuiteChoice.standardName ? .standard : .named(name)
        }

        /// Refuses a step or check that speaks the control protocol with a process that has no control channel.
        func requireControl(_ process: String, at node: SpecNode, for what: String) throws {
            guard let spec = processes[process], !spec.hasControlChannel else { return }
            throw node.error(
                "\(what) needs the control channel of \(process), and \(process) has none: \(spec.executable?.noControlReason ?? "it has no control channel")"
            )
        }

        /// An event filter for `process`. `value-domain` is a built-in role's
        /// change events': your own executable's changes are its observers'
        /// deliveries, which carry no domain, so it could never match there.
        func matcher(_ fields: [String: SpecNode], eventNode: SpecNode, in process: String) throws -> EventMatcher {
            let matcher = try ScenarioParser.parseMatcher(fields, eventNode: eventNode)
            if matcher.valueDomain != nil, processes[process]?.executable != nil {
                throw fields["value-domain"]!.error(
                    "'value-domain' never matches in \(process), your own executable: its changes are its observers' deliveries, "
                        + "which carry no domain; check where a value comes from with expect: { in: \(process), key: …, domain: … } instead")
            }
            return matcher
        }

        func device(_ node: SpecNode?) throws -> String? {
            guard let node else { return nil }
            let name = try node.string()
            guard devices.contains(name) else { throw node.error("unknown device '\(name)'; declared: \(devices.joined(separator: ", "))") }
            return name
        }
    }

    static func parseApp(_ node: SpecNode?, file: String, fileSystem: any ScenarioFileSystem) throws -> (AppManifest, AppSource) {
        guard let node else { return (.example, .example) }
        if case .mapping = node.node {
            return (try AppManifest.parse(node), .inline(yaml: try Yams.serialize(node: node.node)))
        }
        let text = try node.string()
        if text == "example" { return (.example, .example) }
        let path = text.hasPrefix("/") ? text : ((file as NSString).deletingLastPathComponent as NSString).appendingPathComponent(text)
        guard let manifest = try fileSystem.loadManifest(at: path) else { throw node.error("no app manifest at '\(path)' (or use 'example')") }
        return (manifest, .file(path))
    }

    static func parseStep(_ node: SpecNode, _ context: Context) throws -> Step {
        // A step that takes nothing may be written bare, as its row in the step table shows it: `- wait-cloud`.
        if let text = node.plainText, let spec = StepGrammar.spec(text), spec.shorthand == "nothing" {
            let (action, summary) = try spec.read(StepInput(spec: spec, body: node.emptyBody, context: context))
            return Step(action: action, line: node.line, keyword: text, summary: summary)
        }
        if let text = node.plainText, let spec = StepGrammar.spec(text) {
            throw node.error("'\(text)' takes \(spec.shorthand.map { "\($0) or " } ?? "")fields: write it as '- \(text): …'")
        }
        let entries = try node.entries()
        guard entries.count == 1, let (keyword, body) = entries.first else {
            throw node.error("a step is a mapping with one key (the step's name), e.g. '- set: { in: app, key: theme, value: dark }'")
        }
        guard let spec = StepGrammar.spec(keyword) else {
            throw body.error("unknown step '\(keyword)'; steps are: \(StepGrammar.keywords.joined(separator: ", "))")
        }
        let (action, summary) = try spec.read(StepInput(spec: spec, body: body, context: context))
        let step = Step(action: action, line: node.line, keyword: keyword, summary: summary)
        for process in step.controlledProcesses { try context.requireControl(process, at: body, for: "'\(keyword)'") }
        return step
    }

    static func parameters(_ node: SpecNode?) throws -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in try node?.entries() ?? [] { result[name] = try value.string() }
        return result
    }

    static let matcherKeys = [
        "key", "value", "absent", "origin", "reason", "card", "kind", "status", "keys", "message", "value-domain", "mechanism", "matches", "stream",
    ]

    static func parseMatcher(_ fields: [String: SpecNode], eventNode: SpecNode) throws -> EventMatcher {
        let event = try eventNode.string()
        guard EventMatcher.events.contains(event) else {
            throw eventNode.error("unknown event '\(event)'; events are: \(EventMatcher.events.joined(separator: ", "))")
        }
        var matcher = EventMatcher(event: event)
        matcher.key = try fields["key"]?.string()
        if let node = fields["value"] { matcher.value = .some(try node.plistValue()) }
        if try fields["absent"]?.bool() == true { matcher.value = .some(nil) }
        matcher.origin = try fields["origin"]?.string()
        // other-device: an iCloud notification delivered to a user's executable (`did-change-externally`).
        if let origin = matcher.origin, !["this-process", "other-process", "other-device"].contains(origin) {
            throw fields["origin"]!.error("origin is this-process, other-process or other-device, found '\(origin)'")
        }
        matcher.reason = try fields["reason"]?.string()
        matcher.card = try fields["card"].map(parseCard)
        matcher.kind = try fields["kind"]?.string()
        matcher.status = try fields["status"]?.int(in: ControlProtocol.exitStatusRange)
        matcher.keys = try fields["keys"].map { node in
            if case .sequence = node.node { return try node.list().map { try $0.string() } }
            return try node.strings()
        }
        if matcher.keys != nil && event != "cloud-change" { throw fields["keys"]!.error("'keys' goes with the cloud-change event") }
        matcher.message = try fields["message"]?.string()
        if matcher.message != nil && !["warning", "error"].contains(event) {
            throw fields["message"]!.error("'message' goes with warning and error events")
        }
        matcher.valueDomain = try fields["value-domain"]?.string()
        if matcher.valueDomain != nil && event != "change" { throw fields["value-domain"]!.error("'value-domain' goes with the change event") }
        matcher.mechanism = try fields["mechanism"]?.string()
        if let mechanism = matcher.mechanism {
            guard ["change", "delivery"].contains(event) else {
                throw fields["mechanism"]!.error("'mechanism' goes with the change and delivery events")
            }
            guard DeliveryMechanism(rawValue: mechanism) != nil else {
                throw fields["mechanism"]!.error(
                    "a delivery mechanism is one of \(DeliveryMechanism.allCases.map(\.rawValue).joined(separator: ", ")), found '\(mechanism)'")
            }
        }
        matcher.pattern = try fields["matches"].map(parsePattern)
        matcher.stream = try fields["stream"].map(parseStream)
        if event == "output" {
            guard matcher.pattern != nil else { throw eventNode.error("an output event needs 'matches' (a regular expression a line must match)") }
        } else if let node = fields["matches"] ?? fields["stream"] {
            throw node.error("'matches' and 'stream' go with the output event")
        }
        if let reason = matcher.reason, event == "cloud-change", !CloudReasons.all.contains(reason) {
            throw fields["reason"]!.error("a cloud-change reason is one of \(CloudReasons.all.joined(separator: ", ")), found '\(reason)'")
        }
        return matcher
    }

    /// A regular expression, checked now so a bad one is an error at its line and column.
    static func parsePattern(_ node: SpecNode) throws -> String {
        let pattern = try node.string()
        do { _ = try NSRegularExpression(pattern: pattern) } catch {
            throw node.error("'\(pattern)' is not a valid regular expression (ICU syntax, as NSRegularExpression reads it)")
        }
        return pattern
    }

    static func parseStream(_ node: SpecNode) throws -> String {
        let stream = try node.string()
        guard ["stdout", "stderr"].contains(stream) else { throw node.error("stream is stdout or stderr, found '\(stream)'") }
        return stream
    }

    static func parseCard(_ node: SpecNode) throws -> [String: PlistValue?] {
        var card: [String: PlistValue?] = [:]
        for (key, value) in try node.entries() {
            card[key] = value.node.null != nil && value.node.scalar?.style == .plain ? PlistValue?.none : .some(try value.plistValue())
        }
        return card
    }

    static func parseCheck(_ node: SpecNode, _ context: Context) throws -> Check {
        let fields = try node.fields(allowed: [
            "in", "key", "value", "absent", "domain", "saw", "not-saw", "card", "file", "device", "app", "count", "length",
            "intact", "moved-aside", "acknowledged", "exit", "status", "origin", "reason", "kind", "times",
            "cloud", "account", "copy", "by", "ahead-ms", "uploads", "kvs", "keys", "message", "value-domain", "search-list", "matching", "as",
            "output", "mechanism", "matches", "stream", "suite", "ready", "forced",
        ])
        if let check = try parseCloudCheck(fields, node, context) { return check }
        if let file = fields["file"] {
            // Accepted by the check list above, but meaning nothing to a file check: refused, not silently ignored.
            let fileKeys: Set = ["file", "device", "app", "key", "value", "absent", "count", "matching", "length", "intact", "moved-aside"]
            if let stray = fields.keys.sorted().first(where: { !fileKeys.contains($0) }) {
                throw fields[stray]!.error("'\(stray)' does not go with a file check (it takes \(fileKeys.sorted().joined(separator: ", ")))")
            }
            return .file(try parseFileCheck(file, fields, node, context))
        }
        if let process = fields["acknowledged"] { return .acknowledged(process: try context.process(process)) }
        if let process = fields["exit"] {
            guard let status = fields["status"] else { throw node.error("an exit check needs 'status'") }
            return .exit(process: try context.process(process), status: Int32(try status.int(in: ControlProtocol.exitStatusRange)))
        }
        guard let inNode = fields["in"] else {
            throw node.error("a check needs 'in' (a process), 'file' (a domain), 'acknowledged' or 'exit'")
        }
        let check = try parseProcessCheck(try context.process(inNode), fields, node, context)
        if let process = check.controlledProcess { try context.requireControl(process, at: node, for: "this check") }
        return check
    }

    /// `times: N` (exactly), or `times: { at-least: N, at-most: M }` (either or both).
    static func parseCountBound(_ node: SpecNode) throws -> CountBound {
        if node.plainText != nil { return .exactly(try node.int(in: 0...maximumCount)) }
        let bounds = try node.fields(allowed: ["at-least", "at-most"])
        let low = try bounds["at-least"]?.int(in: 0...maximumCount)
        let high = try bounds["at-most"]?.int(in: 0...maximumCount)
        guard low != nil || high != nil else { throw node.error("times is a count, or { at-least: N, at-most: M } with either or both") }
        if let low, let high, low > high { throw node.error("at-least (\(low)) is more than at-most (\(high))") }
        return CountBound(atLeast: low ?? 0, atMost: high)
    }

    /// A check on a process: `{ in: P, … }` with saw / not-saw, search-list, kvs, card, or a key's value and domain.
    static func parseProcessCheck(_ process: String, _ fields: [String: SpecNode], _ node: SpecNode, _ context: Context) throws -> Check {
        let suite = try context.suite(of: process, fields["suite"])
        if let stray = fields["suite"], fields["search-list"] == nil, fields["key"] == nil || fields["saw"] != nil || fields["not-saw"] != nil {
            throw stray.error("'suite' goes with a key's check or a search-list check")
        }
        if let forced = fields["forced"] { return try parseForcedCheck(process, forced, fields, suite, context) }
        if let eventNode = fields["saw"] ?? fields["not-saw"] {
            let matcher = try context.matcher(fields, eventNode: eventNode, in: process)
            if fields["times"] != nil && fields["saw"] == nil { throw fields["times"]!.error("'times' goes with 'saw'") }
            let times = try fields["times"].map(parseCountBound)
            return fields["saw"] != nil ? .saw(process: process, matcher, times: times) : .notSaw(process: process, matcher)
        }
        if let status = fields["status"] {
            if let other = ["output", "search-list", "kvs", "card", "key"].first(where: { fields[$0] != nil }) {
                throw status.error("'status' checks how \(process) exited; write it as a check of its own, not with '\(other)'")
            }
            return .exit(process: process, status: Int32(try status.int(in: ControlProtocol.exitStatusRange)))
        }
        if let output = fields["output"] {
            let inner = try output.fields(allowed: ["contains", "matches", "stream"])
            let contains = try inner["contains"]?.string()
            let pattern = try inner["matches"].map(parsePattern)
            guard contains != nil || pattern != nil else {
                throw output.error("an output check needs 'contains' (text) or 'matches' (a regular expression)")
            }
            return .output(process: process, contains: contains, pattern: pattern, stream: try inner["stream"].map(parseStream))
        }
        if let order = fields["search-list"] {
            return .searchList(process: process, try order.list().map { try $0.string() }, suite: suite)
        }
        if let kvsKey = fields["kvs"] {
            if let value = fields["value"] { return .cloudValueIn(process: process, key: try kvsKey.string(), value: try value.plistValue()) }
            guard try fields["absent"]?.bool() == true else { throw node.error("a kvs check needs 'value' or 'absent: true'") }
            return .cloudValueIn(process: process, key: try kvsKey.string(), value: nil)
        }
        if let ready = fields["ready"] {
            if let other = ["key", "card", "output", "search-list", "kvs"].first(where: { fields[$0] != nil }) {
                throw ready.error("'ready' checks what \(process) said as it became ready; write it as a check of its own, not with '\(other)'")
            }
            try context.requireControl(process, at: ready, for: "a ready check")
            return .readyInfo(process: process, try parseCard(ready))
        }
        if let card = fields["card"] {
            guard context.processes[process]!.role == .widget else {
                throw card.error("\(process) is not a widget: it has no card (an exec: process needs target: widget)")
            }
            try context.requireControl(process, at: card, for: "a card check")
            return .card(process: process, try parseCard(card))
        }
        guard let key = fields["key"] else {
            throw node.error("a process check needs 'key' (with value, absent or domain), 'saw', 'not-saw' or 'card'")
        }
        if let kindNode = fields["as"] {
            let name = try kindNode.string()
            guard let kind = TypedRead(rawValue: name) else {
                throw kindNode.error("'as' is one of \(TypedRead.allCases.map(\.rawValue).joined(separator: ", ")), found '\(name)'")
            }
            if try fields["absent"]?.bool() == true {
                return .typedValue(process: process, key: try key.string(), as: kind, value: nil, suite: suite)
            }
            guard let value = fields["value"] else { throw node.error("a typed check needs 'value' (or absent: true for nil)") }
            return .typedValue(process: process, key: try key.string(), as: kind, value: try value.plistValue(), suite: suite)
        }
        var value: PlistValue?? = nil
        if let node = fields["value"] { value = .some(try node.plistValue()) }
        if try fields["absent"]?.bool() == true { value = .some(nil) }
        let domain = try fields["domain"]?.string()
        if value == nil && domain == nil { throw node.error("a process check on '\(try key.string())' needs value, absent: true or domain") }
        return .value(process: process, key: try key.string(), value: value, domain: domain, suite: suite)
    }

    /// `{ in: P, key: K, forced: BOOL }` (`objectIsForced(forKey:)`), with `domain: D` `objectIsForced(forKey:inDomain:)`;
    /// `suite` as a value check's. Every other field of a process check is refused.
    static func parseForcedCheck(
        _ process: String, _ forced: SpecNode, _ fields: [String: SpecNode], _ suite: SuiteChoice, _ context: Context
    ) throws -> Check {
        if let stray = fields.keys.sorted().first(where: { !["in", "key", "forced", "domain", "suite"].contains($0) }) {
            throw fields[stray]!.error(
                "'\(stray)' does not go with 'forced' (it takes in, key, forced: true or false, and optionally domain and suite); "
                    + "check a value with a check of its own")
        }
        guard let key = fields["key"] else { throw forced.error("'forced' checks objectIsForced(forKey:) of a key: add 'key'") }
        try context.requireControl(process, at: forced, for: "a forced check")
        return .forced(process: process, key: try key.string(), inDomain: try fields["domain"]?.string(), forced: try forced.bool(), suite: suite)
    }

    /// `{ file: DOMAIN, device, app, key+value | absent | count | matching+count | length | intact | moved-aside }`.
    static func parseFileCheck(_ file: SpecNode, _ fields: [String: SpecNode], _ node: SpecNode, _ context: Context) throws -> FileCheck {
        let domain = try file.string()
        let device = try context.device(fields["device"])
        let app = try fields["app"]?.string()
        let condition: FileCheck.Condition
        if let key = fields["key"] {
            guard let value = fields["value"] else { throw node.error("a file check with 'key' needs 'value' (or use absent: KEY)") }
            condition = .value(key: try key.string(), try value.plistValue())
        } else if let absent = fields["absent"] {
            condition = .absent(key: try absent.string())
        } else if let count = fields["count"], let pattern = fields["matching"] {
            condition = .countMatching(pattern: try pattern.string(), try count.int(in: 0...PlistLimits.maximumValueCount))
        } else if let count = fields["count"] {
            condition = .count(try count.int(in: 0...PlistLimits.maximumValueCount))
        } else if let length = fields["length"] {
            let inner = try length.fields(allowed: ["key", "is"], required: ["key", "is"])
            condition = .length(key: try inner["key"]!.string(), try inner["is"]!.int(in: 0...PlistLimits.maximumValueCount))
        } else if try fields["intact"]?.bool() == true {
            condition = .intact
        } else if try fields["moved-aside"]?.bool() == true {
            condition = .movedAside
        } else {
            throw node.error("a file check needs one of: key+value, absent, count, length, intact: true, moved-aside: true")
        }
        return FileCheck(domain: domain, device: device, app: app, condition: condition)
    }

    static func parseSignal(_ node: SpecNode?) throws -> Int32 {
        guard let node else { return SIGKILL }
        let text = try node.string().uppercased().replacingOccurrences(of: "SIG", with: "")
        switch text {
        case "KILL", "9": return SIGKILL
        case "TERM", "15": return SIGTERM
        case "INT", "2": return SIGINT
        case "STOP": return SIGSTOP
        case "CONT": return SIGCONT
        default: throw node.error("signal must be KILL, TERM, INT, STOP or CONT, found '\(text)'")
        }
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGKILL: "KILL"
        case SIGTERM: "TERM"
        case SIGINT: "INT"
        case SIGSTOP: "STOP"
        case SIGCONT: "CONT"
        default: "\(signal)"
        }
    }

    static func describe(_ fields: [String: SpecNode], skipping: String) -> String {
        fields.keys.sorted().filter { $0 != skipping }.map { key in
            let node = fields[key]!
            let text = (try? node.plistValue()).map { PlistJSON.encode($0) } ?? "…"
            return "\(key)=\(text)"
        }.joined(separator: " ")
    }

    /// A burst followed (later, at the same level) by a kill of its process does not wait for its responses.
    static func markBurstsCutShort(_ steps: [Step]) -> [Step] {
        steps.enumerated().map { index, step in
            guard case .burst(let burst) = step.action else { return step }
            let killed = steps[(index + 1)...].contains { later in
                if case .kill(let process, _, _) = later.action { return process == burst.process }
                return false
            }
            guard killed else { return step }
            // Everything else as written (its pace and removals were dropped when the burst was made anew here).
            var cut = burst
            cut.waitForResponses = false
            return Step(action: .burst(cut), line: step.line, keyword: step.keyword, summary: step.summary)
        }
    }
}
