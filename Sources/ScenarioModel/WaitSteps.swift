import Foundation
import SpecFormat

extension StepGrammar {
    // MARK: Waiting

    static let waitSteps: [StepSpec] = [
        StepSpec(
            "wait",
            fields: [
                .required("for", .text, "an event"), .required("in", .process),
                .optional("timeout", .seconds, "default \(Int(ScenarioParser.defaultWait))"),
            ],
            takesFilters: true, does: "waits for an event in that process (see below)",
            examples: [
                "{ for: change, in: app, key: theme, value: dark, origin: other-process, value-domain: group.com.example.notes, timeout: 30 }",
                "{ for: render, in: widget, reason: request, card: { count: 3, theme: ~ } }",
                "{ for: cloud-change, in: app, reason: server-change, keys: [a, b] }",
                "{ for: warning, in: app, kind: missing-entitlement, message: x }",
                "{ for: exit, in: program, status: 3 }", "{ for: output, in: program, matches: \"^done [0-9]+$\", stream: stderr }",
                "{ for: delivery, in: program, key: k, absent: true, mechanism: observe }", "{ for: ready, in: app, timeout: 0.5 }",
            ]
        ) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let matcher = try input.context.matcher(fields.nodes, eventNode: fields.node("for"), in: process)
            let timeout = try fields.seconds("timeout") ?? ScenarioParser.defaultWait
            return (.wait(process: process, matcher: matcher, timeout: timeout), "wait for \(matcher) in \(process)")
        } write: {
            guard case .wait(let process, let matcher, let timeout) = $0 else { return nil }
            return .mapping(
                [("for", YAMLText.scalar(matcher.event)), ("in", YAMLText.scalar(process))]
                    + [timeout == ScenarioParser.defaultWait ? nil : ("timeout", "\(timeout)")] + matcher.writtenFilters)
        },
        StepSpec(
            "quiet", fields: [.required("for", .text, "an event"), .required("in", .process), .required("seconds", .seconds)],
            takesFilters: true,
            does: "nothing matching may happen in that process from the start of the step before it (so what that step "
                + "caused counts, however soon it came; an event a `wait` matched does not) until `seconds` from now (a "
                + "suspended widget must not render); the one step that always takes its whole time",
            examples: ["{ for: render, in: widget, seconds: 2 }", "{ for: change, in: app, key: theme, seconds: 0.25 }"]
        ) { input in
            let fields = try input.fields()
            let process = try fields.process("in")
            let matcher = try input.context.matcher(fields.nodes, eventNode: fields.node("for"), in: process)
            let seconds = try fields.seconds("seconds")!
            return (.quiet(process: process, matcher: matcher, seconds: seconds), "no \(matcher) in \(process) for \(seconds) s")
        } write: {
            guard case .quiet(let process, let matcher, let seconds) = $0 else { return nil }
            return .mapping(
                [("for", YAMLText.scalar(matcher.event)), ("in", YAMLText.scalar(process)), ("seconds", "\(seconds)")] + matcher.writtenFilters)
        },
    ]
}
