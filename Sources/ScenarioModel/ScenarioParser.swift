import AppModel
import AppProtocol
import Foundation
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
        try parse(SpecNode.load(path, reading: fileSystem.readFile(at:)), fileSystem: fileSystem)
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
        let exits = try StepGrammar.expectedExit(of: spec, body)
        let step = Step(action: action, line: node.line, keyword: keyword, summary: summary, exits: exits)
        for process in step.controlledProcesses { try context.requireControl(process, at: body, for: "'\(keyword)'") }
        return step
    }

    static func parameters(_ node: SpecNode?) throws -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in try node?.entries() ?? [] { result[name] = try value.string() }
        return result
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
