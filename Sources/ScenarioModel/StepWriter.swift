import AppProtocol
import Foundation
import GroupDefaults
import PropertyList

/// Typed steps written back as scenario YAML, in the forms `StepTable`
/// declares (a generated history, `groupsim fuzz`, is a scenario file like
/// any other). It writes the steps and checks a program makes; each
/// keyword is checked against the grammar, so a step written here is one
/// the parser reads.
package enum StepWriter {
    /// The step as list items of a `steps:` list, indented by `indent`.
    package static func lines(_ action: Step.Action, indent: String = "  ") -> [String] {
        switch action {
        case .parallel(let steps):
            return [indent + "- " + keyword("parallel") + ":"] + steps.flatMap { lines($0.action, indent: indent + "    ") }
        case .expect(let checks):
            return [indent + "- " + keyword("expect") + ":"] + checks.map { indent + "    - " + check($0.check) }
        case .repeated(let times, let steps):
            return [indent + "- " + keyword("repeat") + ":", indent + "    times: \(times)", indent + "    steps:"]
                + steps.flatMap { lines($0.action, indent: indent + "      ") }
        default:
            let (name, body) = step(action)
            return [indent + "- " + keyword(name) + ":" + (body.isEmpty ? "" : " " + body)]
        }
    }

    /// The grammar's keyword, checked: a step the parser does not know is a mistake of the caller's.
    static func keyword(_ name: String) -> String {
        precondition(StepGrammar.spec(name) != nil, "'\(name)' is not a step of StepTable")
        return name
    }

    // MARK: Steps

    /// The step's keyword and its body (empty: nothing).
    static func step(_ action: Step.Action) -> (String, String) {
        switch action {
        case .launch(let names): return ("launch", names.count == 1 ? scalar(names[0]) : list(names.map(scalar)))
        case .restart(let process, nil): return ("restart", scalar(process))
        case .restart(let process, let arguments?):
            return ("restart", mapping([("process", scalar(process)), ("args", list(arguments.map(scalar)))]))
        case .quit(let process): return ("quit", scalar(process))
        case .command(let process, let request, let suite): return command(process, request, suite: suite)
        case .intent(let step):
            var fields = [("name", scalar(step.name))]
            if !step.parameters.isEmpty {
                fields.append(("params", mapping(step.parameters.keys.sorted().map { ($0, scalar(step.parameters[$0]!)) })))
            }
            if let device = step.device { fields.append(("device", scalar(device))) }
            if case .executable(let process, _) = step.place { fields.append(("in", scalar(process))) }
            if let status = step.status { fields.append(("status", "\(status)")) }
            if !step.arguments.isEmpty { fields.append(("args", list(step.arguments.map(scalar)))) }
            if let result = step.result { fields.append(("result", result.map(value) ?? "~")) }
            if let dialog = step.dialog { fields.append(("dialog", scalar(dialog))) }
            if let error = step.error { fields.append(("error", scalar(error))) }
            return ("intent", mapping(fields))
        case .defaults(let arguments, let status, let output):
            return ("defaults", tool(arguments, status: status, output: output))
        case .run(let arguments, let status, let output):
            return ("run", tool(arguments, status: status, output: output))
        case .wait(let process, let matcher, let timeout):
            return (
                "wait",
                mapping(
                    [("for", scalar(matcher.event)), ("in", scalar(process))]
                        + (timeout == ScenarioParser.defaultWait ? [] : [("timeout", "\(timeout)")]) + filters(matcher))
            )
        case .quiet(let process, let matcher, let seconds):
            return ("quiet", mapping([("for", scalar(matcher.event)), ("in", scalar(process)), ("seconds", "\(seconds)")] + filters(matcher)))
        case .kill(let process, let signal, let afterAcks):
            if signal == SIGKILL && afterAcks == nil { return ("kill", scalar(process)) }
            return (
                "kill",
                mapping(
                    [("process", scalar(process)), ("signal", ScenarioParser.signalName(signal))]
                        + (afterAcks.map { [("after-acks", "\($0)")] } ?? []))
            )
        case .suspend(let process): return ("suspend", scalar(process))
        case .resume(let process): return ("resume", scalar(process))
        case .corrupt(let domain, let device, let content):
            return (
                "corrupt",
                mapping(
                    [("domain", scalar(domain))] + (device.map { [("device", scalar($0))] } ?? [])
                        + (content == ScenarioParser.notAPropertyList ? [] : [("content", quoted(content))]))
            )
        case .deleteFile(let domain, let device):
            return ("delete-file", mapping([("domain", scalar(domain))] + (device.map { [("device", scalar($0))] } ?? [])))
        case .eraseDevice(let device): return ("erase-device", scalar(device))
        case .managed(let device, let app, let change, let suite): return ("managed", managed(device: device, app: app, change, suite: suite))
        case .waitBurst(let process): return ("wait-burst", scalar(process))
        case .cloud(let cloudAction): return cloud(cloudAction)
        case .send(let process, let line): return ("send", mapping([("to", scalar(process)), ("line", quoted(line))]))
        case .reboot(let device, let protection):
            return ("reboot", mapping((device.map { [("device", scalar($0))] } ?? []) + [("protection", protection.rawValue)]))
        case .unlock(let device): return ("unlock", mapping(device.map { [("device", scalar($0))] } ?? []))
        case .prewarm(let process): return ("prewarm", scalar(process))
        case .advanceClock(let device, let seconds):
            return ("advance-clock", mapping((device.map { [("device", scalar($0))] } ?? []) + [("by", scalar(duration(seconds)))]))
        case .editFile(let domain, let device, let key, let newValue):
            return (
                "edit-file",
                mapping(
                    [("domain", scalar(domain))] + (device.map { [("device", scalar($0))] } ?? []) + [("key", scalar(key))]
                        + [newValue.map { ("value", value($0)) } ?? ("absent", "true")])
            )
        case .burst(let burst): return ("burst", Self.burst(burst))
        case .launchFails, .parallel, .expect, .repeated:
            preconditionFailure("StepWriter does not write \(action) steps")
        }
    }

    static func burst(_ burst: Burst) -> String {
        var fields = [("in", scalar(burst.process)), ("count", "\(burst.count)"), ("key", scalar(burst.keyTemplate))]
        if let fixed = burst.value { fields.append(("value", value(fixed))) }
        if let every = burst.syncEvery { fields.append(("sync-every", "\(every)")) }
        if burst.cloud { fields.append(("kvs", "true")) }
        if burst.background { fields.append(("background", "true")) }
        if let pace = burst.paceMilliseconds { fields.append(("pace-ms", "\(pace)")) }
        if burst.removes { fields.append(("remove", "true")) }
        return mapping(fields)
    }

    static func command(_ process: String, _ request: AppRequest, suite: SuiteChoice = .processDefault) -> (String, String) {
        let target = ("in", scalar(process))
        // The requests of value steps take `suite:` (kvs- ones do not, and the shorthand forms are written only with the default).
        func withSuite(_ fields: [(String, String)]) -> String { mapping(fields + suiteField(suite)) }
        switch request {
        case .set(let key, let newValue): return ("set", withSuite([target, ("key", scalar(key)), ("value", value(newValue))]))
        case .remove(let key): return ("remove", withSuite([target, ("key", scalar(key))]))
        case .increment(let key, let by): return ("increment", withSuite([target, ("key", scalar(key)), ("by", "\(by)")]))
        case .append(let key, let values) where values.count == 1:
            return ("append", withSuite([target, ("key", scalar(key)), ("value", value(values[0]))]))
        case .mergeDictionary(let key, let entries):
            return ("merge", withSuite([target, ("key", scalar(key)), ("value", value(.dictionary(entries)))]))
        case .register(let defaults): return ("register", withSuite([target, ("defaults", value(.dictionary(defaults)))]))
        case .addSuite(let name): return ("add-suite", withSuite([target, ("name", scalar(name))]))
        case .removeSuite(let name): return ("remove-suite", withSuite([target, ("name", scalar(name))]))
        case .synchronize: return ("synchronize", suite == .processDefault ? scalar(process) : withSuite([target]))
        case .clear: return ("clear", suite == .processDefault ? scalar(process) : withSuite([target]))
        case .reloadTimeline: return ("reload", scalar(process))
        case .reloadWidgets: return ("reload-widgets", scalar(process))
        case .cloudSet(let key, let newValue): return ("kvs-set", mapping([target, ("key", scalar(key)), ("value", value(newValue))]))
        case .cloudRemove(let key): return ("kvs-remove", mapping([target, ("key", scalar(key))]))
        default: preconditionFailure("no step sends \(request)")
        }
    }

    /// `suite:` as written (nothing for the process's default).
    static func suiteField(_ suite: SuiteChoice) -> [(String, String)] {
        switch suite {
        case .processDefault: []
        case .standard: [("suite", scalar(SuiteChoice.standardName))]
        case .named(let name): [("suite", scalar(name))]
        }
    }

    static func cloud(_ action: CloudAction) -> (String, String) {
        switch action {
        case .signIn(let device, let account): return ("sign-in", mapping([("device", scalar(device)), ("account", scalar(account))]))
        case .signOut(let device): return ("sign-out", scalar(device))
        case .network(let device, .online): return ("online", scalar(device))
        case .network(let device, .offline): return ("offline", scalar(device))
        case .network(let device, .skew(let ms)): return ("clock-skew", mapping([("device", scalar(device)), ("ms", "\(ms)")]))
        case .network(let device, .uploadInterval(let ms)):
            return ("upload-interval", mapping([("device", scalar(device)), ("ms", "\(ms)")]))
        case .network(let device, let change):
            let field: (String, String)
            switch change {
            case .partition: field = ("partition", "true")
            case .heal: field = ("heal", "true")
            case .latency(let ms): field = ("latency-ms", "\(ms)")
            case .dropPushes(let count): field = ("drop-pushes", "\(count)")
            case .duplicatePushes(let count): field = ("duplicate-pushes", "\(count)")
            case .online, .offline, .skew, .uploadInterval: preconditionFailure("written above")
            }
            return ("network", mapping([("device", scalar(device)), field]))
        case .killCloud: return ("kill-cloud", "")
        case .restartCloud: return ("restart-cloud", "")
        case .killAgent(let device): return ("kill-agent", scalar(device))
        case .restartAgent(let device): return ("restart-agent", scalar(device))
        case .waitForQuiescence(let timeout):
            return ("wait-cloud", timeout == ScenarioParser.defaultCloudWait ? "" : mapping([("timeout", "\(timeout)")]))
        }
    }

    static func tool(_ arguments: [String], status: Int32, output: String?) -> String {
        if status == 0 && output == nil { return list(arguments.map(scalar)) }
        return mapping([("args", list(arguments.map(scalar))), ("status", "\(status)")] + (output.map { [("output", quoted($0))] } ?? []))
    }

    static func filters(_ matcher: EventMatcher) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let key = matcher.key { fields.append(("key", scalar(key))) }
        if let expected = matcher.value { fields.append(expected.map { ("value", value($0)) } ?? ("absent", "true")) }
        if let origin = matcher.origin { fields.append(("origin", scalar(origin))) }
        if let reason = matcher.reason { fields.append(("reason", scalar(reason))) }
        if let kind = matcher.kind { fields.append(("kind", scalar(kind))) }
        if let status = matcher.status { fields.append(("status", "\(status)")) }
        if let keys = matcher.keys { fields.append(("keys", list(keys.map(scalar)))) }
        if let message = matcher.message { fields.append(("message", quoted(message))) }
        if let domain = matcher.valueDomain { fields.append(("value-domain", scalar(domain))) }
        if let mechanism = matcher.mechanism { fields.append(("mechanism", scalar(mechanism))) }
        if let pattern = matcher.pattern { fields.append(("matches", quoted(pattern))) }
        if let stream = matcher.stream { fields.append(("stream", scalar(stream))) }
        precondition(matcher.card == nil, "StepWriter does not write card filters")
        return fields
    }

    // MARK: Checks

    package static func check(_ check: Check) -> String {
        switch check {
        case .value(let process, let key, let expected, let domain, let suite):
            var fields = [("in", scalar(process)), ("key", scalar(key))]
            if let expected { fields.append(expected.map { ("value", value($0)) } ?? ("absent", "true")) }
            if let domain { fields.append(("domain", scalar(domain))) }
            return mapping(fields + suiteField(suite))
        case .cloudValueIn(let process, let key, let expected):
            return mapping([("in", scalar(process)), ("kvs", scalar(key)), expected.map { ("value", value($0)) } ?? ("absent", "true")])
        case .file(let file):
            return mapping(
                [("file", scalar(file.domain))] + (file.device.map { [("device", scalar($0))] } ?? [])
                    + (file.app.map { [("app", scalar($0))] } ?? []) + fileCondition(file.condition))
        case .cloud(.cloudValue(let store, let account, let key, let expected, let writtenBy, let aheadMs)):
            var fields = [("cloud", scalar(store)), ("account", scalar(account)), ("key", scalar(key))]
            if let expected { fields.append(expected.map { ("value", value($0)) } ?? ("absent", "true")) }
            if let writtenBy { fields.append(("by", scalar(writtenBy))) }
            if let aheadMs { fields.append(("ahead-ms", "\(aheadMs)")) }
            return mapping(fields)
        case .cloud(.copyValue(let device, let store, let key, let expected)):
            return mapping([
                ("copy", scalar(store)), ("device", scalar(device)), ("key", scalar(key)),
                expected.map { ("value", value($0)) } ?? ("absent", "true"),
            ])
        case .cloud(.uploads(let device, let count)): return mapping([("uploads", scalar(device)), ("count", "\(count)")])
        case .acknowledged(let process): return mapping([("acknowledged", scalar(process))])
        case .exit(let process, let status): return mapping([("exit", scalar(process)), ("status", "\(status)")])
        case .searchList(let process, let domains, let suite):
            return mapping([("in", scalar(process)), ("search-list", list(domains.map(scalar)))] + suiteField(suite))
        case .forced(let process, let key, let domain, let forced, let suite):
            return mapping(
                [("in", scalar(process)), ("key", scalar(key)), ("forced", "\(forced)")] + (domain.map { [("domain", scalar($0))] } ?? [])
                    + suiteField(suite))
        case .output(let process, let contains, let pattern, let stream):
            let inner = [contains.map { ("contains", quoted($0)) }, pattern.map { ("matches", quoted($0)) }, stream.map { ("stream", scalar($0)) }]
            return mapping([("in", scalar(process)), ("output", mapping(inner.compactMap { $0 }))])
        case .saw, .notSaw, .card, .readyInfo, .typedValue: preconditionFailure("StepWriter does not write \(check) checks")
        }
    }

    static func fileCondition(_ condition: FileCheck.Condition) -> [(String, String)] {
        switch condition {
        case .value(let key, let expected): [("key", scalar(key)), ("value", value(expected))]
        case .absent(let key): [("absent", scalar(key))]
        case .count(let count): [("count", "\(count)")]
        case .countMatching(let pattern, let count): [("matching", quoted(pattern)), ("count", "\(count)")]
        case .length(let key, let count): [("length", mapping([("key", scalar(key)), ("is", "\(count)")]))]
        case .intact: [("intact", "true")]
        case .movedAside: [("moved-aside", "true")]
        }
    }

    // MARK: YAML

    /// A duration as advance-clock reads it, in its largest whole unit.
    static func duration(_ seconds: Double) -> String {
        for (unit, size) in [("d", 86_400.0), ("h", 3_600.0), ("m", 60.0)] where seconds >= size && seconds.truncatingRemainder(dividingBy: size) == 0
        {
            return "\(Int(seconds / size))\(unit)"
        }
        return "\(seconds)s"
    }

    static func managed(device: String?, app: String, _ change: ManagedChange, suite: Bool = false) -> String {
        let what: [(String, String)] =
            switch change {
            case .set(let key, let newValue): [("key", scalar(key)), ("value", value(newValue))]
            case .remove(let key): [("remove", scalar(key))]
            case .configuration(let configuration): [("config", value(.dictionary(configuration)))]
            }
        return mapping((device.map { [("device", scalar($0))] } ?? []) + [(suite ? "suite" : "app", scalar(app))] + what)
    }

    static func mapping(_ fields: [(String, String)]) -> String { "{ " + fields.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + " }" }
    static func list(_ items: [String]) -> String { "[" + items.joined(separator: ", ") + "]" }

    /// A string as YAML reads it back as that string: plain when it is a
    /// word YAML takes as text, else double-quoted (JSON's quoting is YAML's).
    static func scalar(_ text: String) -> String {
        // A leading "-" is plain when a letter follows (launch arguments: -theme).
        let word = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let plain =
            word.first.map { $0.isLetter } == true
            && text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }
            && !["true", "false", "yes", "no", "on", "off", "y", "n", "null"].contains(text.lowercased())
        return plain ? text : quoted(text)
    }

    static func quoted(_ text: String) -> String { PlistJSON.quote(text) }

    /// A value as the parser reads it back exactly.
    static func value(_ value: PlistValue) -> String {
        switch value {
        case .string(let text): return scalar(text)
        case .integer(let number): return "\(number)"
        case .bool(let flag): return flag ? "true" : "false"
        case .array(let items): return list(items.map(Self.value))
        case .dictionary(let entries): return entries.isEmpty ? "{}" : mapping(entries.keys.sorted().map { (scalar($0), Self.value(entries[$0]!)) })
        case .real: return PlistJSON.encode(value)
        case .date(let date): return "!date " + PlistJSON.timestamp(date)
        case .data(let bytes): return "!data " + bytes.map { String(format: "%02x", $0) }.joined()
        }
    }
}
