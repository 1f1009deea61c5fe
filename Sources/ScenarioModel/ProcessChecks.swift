import AppProtocol
import Foundation
import PropertyList
import SpecFormat

extension CheckGrammar {
    static let process = StepField.required("in", .process)
    static let value = StepField.optional("value", .value)
    static let absent = StepField.optional("absent", .flag, "`true`: none")
    static let suite = StepGrammar.suiteField
    static let exitStatus = StepField.Kind.number(ControlProtocol.exitStatusRange)

    /// Checks on a process: `{ in: P, … }`.
    static let processChecks: [CheckSpec] = [
        CheckSpec(
            "a value check", lead: "key", form: "{ in: P, key: K, value: V }",
            fields: [process, .required("key"), value, absent, .optional("domain", .text, "the domain it comes from"), suite],
            checks: "P's effective value of K is V (`absent: true`: no domain has K); with `domain`, it comes from D (e.g. `NSManagedDomain` for a "
                + "forced key, `NSArgumentDomain`, `NSRegistrationDomain`, a suite); `value` and `domain` combine. For an `exec:` process, "
                + "through its target's app group unless `suite` says another",
            examples: [
                "{ in: app, key: theme, value: dark }", "{ in: program, key: theme, absent: true, suite: standard }",
                "{ in: app, key: theme, domain: NSArgumentDomain }", "{ in: app, key: n, value: [1, { a: b }], domain: group.com.example.notes }",
            ]
        ) { input in
            let process = try input.process()
            let key = try input.fields.node("key").string()
            let value = try input.fields.valueOrAbsent()
            let domain = try input.fields.text("domain")
            if value == nil && domain == nil { throw input.node.error("a process check on '\(key)' needs value, absent: true or domain") }
            return .value(
                process: process, key: key, value: value, domain: domain, suite: try input.context.suite(of: process, input.fields["suite"]))
        } write: {
            guard case .value(let process, let key, let expected, let domain, let suite) = $0 else { return nil }
            return [
                ("in", YAMLText.scalar(process)), ("key", YAMLText.scalar(key)), expected.map(YAMLText.valueOrAbsent),
                domain.map { ("domain", YAMLText.scalar($0)) }, StepGrammar.suiteField(suite),
            ]
        },
        CheckSpec(
            "a forced check", lead: "forced", form: "{ in: P, key: K, forced: BOOL }",
            fields: [
                process, .required("key"), .required("forced", .flag, "`true` or `false`"),
                .optional("domain", .text, "asks `objectIsForced(forKey:inDomain:)` of that domain"), suite,
            ],
            checks: "`objectIsForced(forKey:)` in P is BOOL: an administrator forced K in the domain of P's instance (the app's, or its "
                + "suite's: an `exec:` process's target app group, or `suite` as for a value check); with `domain: D`, "
                + "`objectIsForced(forKey:inDomain:)` of D",
            examples: [
                "{ in: app, key: theme, forced: true }", "{ in: widget, key: theme, forced: false, domain: group.com.example.notes }",
                "{ in: program, key: theme, forced: true, suite: standard }",
            ]
        ) { input in
            let process = try input.process()
            return .forced(
                process: process, key: try input.fields.node("key").string(), inDomain: try input.fields.text("domain"),
                forced: try input.fields.node("forced").bool(), suite: try input.context.suite(of: process, input.fields["suite"]))
        } write: {
            guard case .forced(let process, let key, let domain, let forced, let suite) = $0 else { return nil }
            return [
                ("in", YAMLText.scalar(process)), ("key", YAMLText.scalar(key)), ("forced", "\(forced)"),
                domain.map { ("domain", YAMLText.scalar($0)) }, StepGrammar.suiteField(suite),
            ]
        },
        CheckSpec(
            "a typed check", lead: "as", form: "{ in: P, key: K, as: TYPE, value: V }",
            fields: [
                process, .required("key"), .required("as", .text, TypedRead.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", ")), value,
                .optional("absent", .flag, "`true`: nil"), suite,
            ],
            checks: "what a typed getter returns in P (`-flag YES` reads as `true`); `absent: true` for nil",
            examples: ["{ in: app, key: flag, as: bool, value: true }", "{ in: program, key: home, as: url, absent: true, suite: group.other }"]
        ) { input in
            let process = try input.process()
            let kindNode = input.fields.node("as")
            let name = try kindNode.string()
            guard let kind = TypedRead(rawValue: name) else {
                throw kindNode.error("'as' is one of \(TypedRead.allCases.map(\.rawValue).joined(separator: ", ")), found '\(name)'")
            }
            guard let value = try input.fields.valueOrAbsent() else {
                throw input.node.error("a typed check needs 'value' (or absent: true for nil)")
            }
            return .typedValue(
                process: process, key: try input.fields.node("key").string(), as: kind, value: value,
                suite: try input.context.suite(of: process, input.fields["suite"]))
        } write: {
            guard case .typedValue(let process, let key, let kind, let value, let suite) = $0 else { return nil }
            return [
                ("in", YAMLText.scalar(process)), ("key", YAMLText.scalar(key)), ("as", kind.rawValue), YAMLText.valueOrAbsent(value),
                StepGrammar.suiteField(suite),
            ]
        },
        CheckSpec(
            "a saw check", lead: "saw", form: "{ in: P, saw: EVENT, …filters }",
            fields: [
                process, .required("saw", .text, "an event"), .optional("times", .value, "N, or `{ at-least: N, at-most: M }` with either or both"),
            ],
            takesFilters: true,
            checks: "P has emitted such an event since launch; with `times: N`, exactly N of them; with `times: { at-least: N }`, `{ at-most: M }` "
                + "or both, that many",
            examples: [
                "{ in: app, saw: change, key: theme, value: dark, times: 2 }",
                "{ in: widget, saw: render, card: { count: 3 }, times: { at-least: 1, at-most: 4 } }",
                "{ in: app, saw: notification, times: { at-most: 5 } }", "{ in: program, saw: exit, status: 0 }",
            ]
        ) { input in
            let process = try input.process()
            let matcher = try input.context.matcher(input.fields.nodes, eventNode: input.fields.node("saw"), in: process)
            return .saw(process: process, matcher, times: try input.fields["times"].map(parseCountBound))
        } write: {
            guard case .saw(let process, let matcher, let times) = $0 else { return nil }
            return [("in", YAMLText.scalar(process)), ("saw", YAMLText.scalar(matcher.event))] + matcher.writtenFilters + [times.map(writtenCount)]
        },
        CheckSpec(
            "a not-saw check", lead: "not-saw", form: "{ in: P, not-saw: EVENT, …filters }",
            fields: [process, .required("not-saw", .text, "an event")],
            takesFilters: true, checks: "P has not (typically after a `wait` on something later)",
            examples: ["{ in: widget, not-saw: render, reason: request }", "{ in: app, not-saw: warning, kind: missing-entitlement }"]
        ) { input in
            let process = try input.process()
            return .notSaw(process: process, try input.context.matcher(input.fields.nodes, eventNode: input.fields.node("not-saw"), in: process))
        } write: {
            guard case .notSaw(let process, let matcher) = $0 else { return nil }
            return [("in", YAMLText.scalar(process)), ("not-saw", YAMLText.scalar(matcher.event))] + matcher.writtenFilters
        },
        CheckSpec(
            "a card check", lead: "card", form: "{ in: P, card: { KEY: VALUE } }", fields: [process, .required("card", .mapping)],
            checks: "the widget's last render showed these values (`~` for absent)", examples: ["{ in: widget, card: { count: 3, theme: ~ } }"]
        ) { input in
            let process = try input.process()
            let card = input.fields.node("card")
            guard input.context.processes[process]!.role == .widget else {
                throw card.error("\(process) is not a widget: it has no card (an exec: process needs target: widget)")
            }
            try input.context.requireControl(process, at: card, for: "a card check")
            return .card(process: process, try ScenarioParser.parseCard(card))
        } write: {
            guard case .card(let process, let card) = $0 else { return nil }
            return [("in", YAMLText.scalar(process)), ("card", YAMLText.card(card))]
        },
        CheckSpec(
            "a ready check", lead: "ready", form: "{ in: P, ready: { KEY: VALUE } }", fields: [process, .required("ready", .mapping)],
            checks: "P's last `ready` said these in its info (`~` for not said): `launch` (`background`, `prewarm`), `protectedData` "
                + "(`unavailable` when it opened its preferences locked), `bundleId`, `suite` … (docs/protocol.md)",
            examples: ["{ in: app, ready: { launch: prewarm, protectedData: ~ } }"]
        ) { input in
            let process = try input.process()
            let ready = input.fields.node("ready")
            try input.context.requireControl(process, at: ready, for: "a ready check")
            return .readyInfo(process: process, try ScenarioParser.parseCard(ready))
        } write: {
            guard case .readyInfo(let process, let info) = $0 else { return nil }
            return [("in", YAMLText.scalar(process)), ("ready", YAMLText.card(info))]
        },
        CheckSpec(
            "a search-list check", lead: "search-list", form: "{ in: P, search-list: [D, …] }",
            fields: [process, .required("search-list", .words, "domains"), suite], checks: "P's search list, in order (as `info` reports it)",
            examples: [
                "{ in: app, search-list: [NSArgumentDomain, group.com.example.notes] }", "{ in: program, search-list: [a.b], suite: standard }",
            ]
        ) { input in
            let process = try input.process()
            return .searchList(
                process: process, try input.fields.node("search-list").list().map { try $0.string() },
                suite: try input.context.suite(of: process, input.fields["suite"]))
        } write: {
            guard case .searchList(let process, let domains, let suite) = $0 else { return nil }
            return [("in", YAMLText.scalar(process)), ("search-list", YAMLText.words(domains)), StepGrammar.suiteField(suite)]
        },
        CheckSpec(
            "a kvs check", lead: "kvs", form: "{ in: P, kvs: K, value: V }", fields: [process, .required("kvs", .text, "a key"), value, absent],
            checks: "what P's iCloud store returns for K (`absent: true`: nothing)",
            examples: ["{ in: app, kvs: theme, value: dark }", "{ in: app, kvs: theme, absent: true }"]
        ) { input in
            guard let value = try input.fields.valueOrAbsent() else { throw input.node.error("a kvs check needs 'value' or 'absent: true'") }
            return .cloudValueIn(process: try input.process(), key: try input.fields.node("kvs").string(), value: value)
        } write: {
            guard case .cloudValueIn(let process, let key, let value) = $0 else { return nil }
            return [("in", YAMLText.scalar(process)), ("kvs", YAMLText.scalar(key)), YAMLText.valueOrAbsent(value)]
        },
        CheckSpec(
            "an output check", lead: "output", form: "{ in: P, output: { contains: TEXT } }",
            fields: [process, .required("output", .mapping, "`contains: TEXT`, `matches: REGEX` or both; optional `stream`: `stdout` or `stderr`")],
            checks: "a kept line of P's output contains TEXT, or matches REGEX, on that stream or either",
            examples: [
                "{ in: program, output: { contains: done } }", "{ in: program, output: { matches: \"^ok [0-9]+$\", stream: stdout } }",
                "{ in: program, output: { contains: \"a: b\", matches: b, stream: stderr } }",
            ]
        ) { input in
            let output = input.fields.node("output")
            let inner = try output.fields(allowed: ["contains", "matches", "stream"])
            let contains = try inner["contains"]?.string()
            let pattern = try inner["matches"].map(ScenarioParser.parsePattern)
            guard contains != nil || pattern != nil else {
                throw output.error("an output check needs 'contains' (text) or 'matches' (a regular expression)")
            }
            return .output(
                process: try input.process(), contains: contains, pattern: pattern, stream: try inner["stream"].map(ScenarioParser.parseStream))
        } write: {
            guard case .output(let process, let contains, let pattern, let stream) = $0 else { return nil }
            let inner = [
                contains.map { ("contains", YAMLText.quoted($0)) }, pattern.map { ("matches", YAMLText.quoted($0)) },
                stream.map { ("stream", YAMLText.scalar($0)) },
            ]
            return [("in", YAMLText.scalar(process)), ("output", YAMLText.mapping(inner))]
        },
        CheckSpec(
            "an exit check", lead: "status", form: "{ in: P, status: N }", fields: [process, .required("status", exitStatus)],
            checks: "as `{ exit: P, status: N }`", examples: ["{ in: program, status: 3 }"]
        ) { input in
            .exit(process: try input.process(), status: Int32(try input.fields.number("status")!))
        } write: { _ in
            // Written as `{ exit: P, status: N }`, which reads back the same.
            nil
        },
    ]

    /// `times: N` (exactly), or `times: { at-least: N, at-most: M }` (either or both).
    static func parseCountBound(_ node: SpecNode) throws -> CountBound {
        let maximum = ScenarioParser.maximumCount
        if node.plainText != nil { return .exactly(try node.int(in: 0...maximum)) }
        let bounds = try node.fields(allowed: ["at-least", "at-most"])
        let low = try bounds["at-least"]?.int(in: 0...maximum)
        let high = try bounds["at-most"]?.int(in: 0...maximum)
        guard low != nil || high != nil else { throw node.error("times is a count, or { at-least: N, at-most: M } with either or both") }
        if let low, let high, low > high { throw node.error("at-least (\(low)) is more than at-most (\(high))") }
        return CountBound(atLeast: low ?? 0, atMost: high)
    }

    /// `times:` as `parseCountBound` reads it back.
    static func writtenCount(_ bound: CountBound) -> (String, String) {
        if let high = bound.atMost, high == bound.atLeast { return ("times", "\(high)") }
        return ("times", YAMLText.mapping([("at-least", "\(bound.atLeast)"), bound.atMost.map { ("at-most", "\($0)") }]))
    }
}
