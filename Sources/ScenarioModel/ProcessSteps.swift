import AppModel
import Foundation
import PropertyList
import SpecFormat

extension StepGrammar {
    // MARK: Processes

    static let processSteps: [StepSpec] = [
        StepSpec(
            "launch", shorthand: "a process name or a list of them",
            fields: [
                .required("process", .process), .required("fails", .text, "text its error must say"),
                .optional("status", failureStatus, "default 1"),
            ],
            does: "starts them and waits until each answers a request (fully started: a widget's timeline listens); "
                + "with `fails`, the launch must fail: the process exits with `status` without coming up, and its error says the text",
            examples: ["app", "[app, widget]", "{ process: program, fails: \"no such file\", status: 3 }", "{ process: app, fails: boom }"]
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
        } write: {
            switch $0 {
            case .launch(let names): names.count == 1 ? .scalar(names[0]) : .inline(YAMLText.words(names))
            case .launchFails(let process, let message, let status):
                .mapping([("process", YAMLText.scalar(process)), ("fails", YAMLText.quoted(message)), status == 1 ? nil : ("status", "\(status)")])
            default: nil
            }
        },
        StepSpec(
            "restart", shorthand: "a process name", fields: [.required("process", .process), .optional("args", .words)],
            does: "ends it cleanly (stdin closed) if it runs, and starts it again — also after it exited or was killed: "
                + "with the declared `args` if none are given, with none for `args: []`",
            examples: ["app", "{ process: program, args: [-theme, dark] }", "{ process: app, args: [] }", "{ process: widget }"]
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
        } write: {
            guard case .restart(let process, let arguments) = $0 else { return nil }
            return arguments.map { .mapping([("process", YAMLText.scalar(process)), ("args", YAMLText.words($0))]) } ?? .scalar(process)
        },
        StepSpec("quit", shorthand: "a process name", does: "closes its stdin: it commits and exits 0", examples: ["widget"]) { input in
            let process = try input.process()
            return (.quit(process), "quit \(process)")
        } write: {
            guard case .quit(let process) = $0 else { return nil }
            return .scalar(process)
        },
        StepSpec(
            "send", fields: [.required("to", .process), .required("line", .text, "written with a newline; none in it")],
            does: "writes a line to the process's stdin (an interactive tool reads it); a built-in role reads its stdin as the control protocol. "
                + "Fails if the process has not taken it within \(Int(sendTimeout)) s (it is suspended, or does not read, and its pipe is full)",
            examples: ["{ to: program, line: \"add milk: 2\" }", "{ to: program, line: \"\" }"]
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
        } write: {
            guard case .send(let process, let line) = $0 else { return nil }
            return .mapping([("to", YAMLText.scalar(process)), ("line", YAMLText.quoted(line))])
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
            examples: [
                "{ name: SetTheme, params: { theme: dark }, device: iPad, result: dark }", "{ name: CountNote, result: ~ }",
                "{ name: Missing, status: 1, args: [-x] }", "{ name: Greet, in: program, dialog: \"Hello, Ann\" }",
                "{ name: Greet, in: program, error: \"no one to greet\" }", "{ name: Greet, in: shortcut, status: 2, args: [a] }",
            ],
            read: ScenarioParser.readIntent, write: ScenarioParser.writeIntent),
    ]
}
