import Foundation

/// Typed steps written back as scenario YAML (a generated history,
/// `groupsim fuzz`, is a scenario file like any other): each step by its
/// declaration's writer (`StepSpec.write`, beside its reader), each check
/// by its form's (`CheckSpec.write`), so what is written here is what the
/// parser reads. The round-trip test holds every declaration to it.
package enum StepWriter {
    /// The step as list items of a `steps:` list, indented by `indent`, with its `exits:` if it has one.
    package static func lines(_ step: Step, indent: String = "  ") -> [String] {
        lines(step.action, exits: step.exits, indent: indent)
    }

    /// The step of this action as list items of a `steps:` list, indented by `indent`.
    package static func lines(_ action: Step.Action, exits: ExpectedExit? = nil, indent: String = "  ") -> [String] {
        for spec in StepGrammar.all {
            switch spec.write(action) {
            case .inline(var body)?:
                if let exits { body = StepGrammar.writing(exits, into: body) }
                return [indent + "- " + spec.keyword + ":" + (body.isEmpty ? "" : " " + body)]
            case .block(let lines)?: return [indent + "- " + spec.keyword + ":"] + lines.map { indent + "    " + $0 }
            case nil: continue
            }
        }
        // No declaration writes it (the round-trip test fails first): a step the parser refuses, naming it.
        return [indent + "- " + unwritten + ": " + YAMLText.quoted("\(action)")]
    }

    /// A check as one flow mapping.
    package static func check(_ check: Check) -> String {
        for spec in CheckGrammar.all {
            if let fields = spec.write(check) { return YAMLText.mapping(fields) }
        }
        return YAMLText.mapping([(unwritten, YAMLText.quoted("\(check)"))])
    }

    /// What stands for a step or check no declaration writes: no step or check has this name.
    static let unwritten = "no-writer-for"
}
