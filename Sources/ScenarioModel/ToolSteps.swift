import Foundation
import SpecFormat

extension StepGrammar {
    // MARK: Outside tools

    /// `defaults` and `run`: a list of words, or `{ args, status, output }`.
    /// `written` takes this step's action apart (nil: another step's).
    static func tool(
        _ keyword: String, shorthand: String, does: String, needsCommand: Bool, examples: [String],
        _ make: @escaping @Sendable ([String], Int32, String?) -> Step.Action,
        written: @escaping @Sendable (Step.Action) -> (arguments: [String], status: Int32, output: String?)?
    ) -> StepSpec {
        StepSpec(
            keyword, shorthand: shorthand,
            fields: [
                .required("args", .words), .optional("status", status, "default 0"), .optional("output", .text, "text its stdout must contain"),
            ], does: does, examples: examples
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
        } write: {
            guard let (arguments, status, output) = written($0) else { return nil }
            if status == 0 && output == nil { return .inline(YAMLText.words(arguments)) }
            return .mapping([("args", YAMLText.words(arguments)), ("status", "\(status)"), output.map { ("output", YAMLText.quoted($0)) }])
        }
    }

    static let toolSteps: [StepSpec] = [
        tool(
            "defaults", shorthand: "a list of words",
            does: "runs `groupsim defaults WORDS…` against the scenario's root (an outside writer), in the scenario file's folder "
                + "(so `import data.plist` reads the file beside it); `output` is what `read`, `read-type` or `export … -` printed",
            needsCommand: false,
            examples: [
                "[write, group.com.example.notes, theme, dark]", "{ args: [read, group.com.example.notes, theme], output: dark }",
                "{ args: [read, nowhere, k], status: 1 }",
            ]
        ) {
            .defaults(arguments: $0, status: $1, output: $2)
        } written: {
            guard case .defaults(let arguments, let status, let output) = $0 else { return nil }
            return (arguments, status, output)
        },
        tool(
            "run", shorthand: "a command as a list of words",
            does: "runs a command for its verdict (say, a script that checks the files with another tool), in the scenario file's folder "
                + "with `GROUPSIM_ROOT` and `GROUPSIM_DEVICE` set, and the runner's own executables' folder in `GROUPSIM_BINARIES` and first on `PATH` (`groupsim` is the runner's); a bare name is looked up there, a path is taken from that folder. "
                + "Its status must be `status`; its output, and stderr, are in the report. It leads a process group of its own, as an "
                + "`exec:` process does: what it leaves running ends when it ends",
            needsCommand: true,
            examples: ["[python3, check.py]", "{ args: [sh, -c, \"exit 3\"], status: 3 }", "{ args: [sh, -c, \"echo ok\"], output: ok }"]
        ) {
            .run(arguments: $0, status: $1, output: $2)
        } written: {
            guard case .run(let arguments, let status, let output) = $0 else { return nil }
            return (arguments, status, output)
        },
    ]
}
