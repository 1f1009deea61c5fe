import Foundation
import SpecFormat

/// Every form of check an `expect:` takes, one declaration each
/// (`CheckSpec`), in the order of the docs' check table: on a process
/// (`ProcessChecks`) and on the disk and the cloud (`StoreChecks`).
package enum CheckGrammar {
    package static let all: [CheckSpec] = processChecks + storeChecks

    /// The docs' check table, in the order of `all`.
    package static var table: String {
        (["| check | fields | what it checks |", "|---|---|---|"] + all.map(\.tableRow)).joined(separator: "\n")
    }

    /// Reads one check: its form is the one its keys name (`CheckSpec.lead`); a key its form does not take is refused where it is written.
    static func parse(_ node: SpecNode, _ context: ScenarioParser.Context) throws -> Check {
        let entries = try node.entries()
        let keys = Set(entries.map(\.0))
        let candidates = all.filter { keys.contains($0.lead) }
        // A lead another candidate takes as a field is that field (`key` of a file check, `status` of an exit check).
        var forms = candidates.filter { form in !candidates.contains { $0.lead != form.lead && $0.allowedKeys.contains(form.lead) } }
        // Of two, one written whole (every field it needs given) is the one meant: `as` on a file check is a stray key, not a typed check.
        let whole = forms.filter { $0.fields.allSatisfy { !$0.required || keys.contains($0.name) } }
        if forms.count > 1, whole.count == 1 { forms = whole }
        guard let spec = forms.first else {
            throw node.error(
                "a check needs one of: \(all.map(\.lead).joined(separator: ", ")) (the check table in docs/scenarios.md shows each with its fields)")
        }
        if forms.count > 1 {
            let leads = forms.map(\.lead)
            let (second, at) = entries.filter { leads.contains($0.0) }[1]
            let first = leads.first { $0 != second }!
            throw at.error(
                "'\(second)' and '\(first)' are two checks (\(forms.map(\.name).joined(separator: ", "))); write each as a check of its own")
        }
        let allowed = spec.allowedKeys
        for (key, value) in entries where !allowed.contains(key) {
            throw value.error("'\(key)' does not go with \(spec.name) (it takes \(allowed.joined(separator: ", ")))")
        }
        let nodes = try node.fields(allowed: allowed, required: spec.fields.filter(\.required).map(\.name))
        let fields = StepFields(nodes: nodes, declared: spec.fields, owner: "check '\(spec.lead)'", context: context)
        let check = try spec.read(CheckInput(spec: spec, node: node, fields: fields, context: context))
        if let process = check.controlledProcess { try context.requireControl(process, at: node, for: "this check") }
        return check
    }
}
