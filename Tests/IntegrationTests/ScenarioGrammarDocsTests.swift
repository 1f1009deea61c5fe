import Foundation
import ScenarioModel
import Testing

/// The step table in docs/scenarios.md is generated from the step grammar
/// (`StepGrammar`): it fails when the two drift apart. To rewrite the
/// table from the grammar: `GROUPSIM_UPDATE_DOCS=1 swift test --filter ScenarioGrammarDocs`.
@Suite struct ScenarioGrammarDocsTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/scenarios.md")

    /// Where the table under "## Steps" is: the indices of its lines, from its header row to the last row.
    static func stepTable(in lines: [String]) -> Range<Int>? {
        guard let section = lines.firstIndex(of: "## Steps"),
            let start = lines[section...].firstIndex(where: { $0.hasPrefix("| step |") })
        else { return nil }
        let end = lines[start...].firstIndex { !$0.hasPrefix("|") } ?? lines.endIndex
        return start..<end
    }

    @Test func stepTableMatchesTheGrammar() throws {
        var lines = try String(contentsOf: Self.docs, encoding: .utf8).components(separatedBy: "\n")
        let range = try #require(Self.stepTable(in: lines), "docs/scenarios.md has no step table under '## Steps'")
        let generated = StepSpec.table
        if ProcessInfo.processInfo.environment["GROUPSIM_UPDATE_DOCS"] == "1" {
            lines.replaceSubrange(range, with: generated.components(separatedBy: "\n"))
            try lines.joined(separator: "\n").write(to: Self.docs, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            lines[range].joined(separator: "\n") == generated,
            """
            docs/scenarios.md's step table differs from the step grammar (Sources/ScenarioModel/StepTable.swift); \
            run GROUPSIM_UPDATE_DOCS=1 swift test --filter ScenarioGrammarDocs, or put this table there:
            \(generated)
            """)
    }

    /// Every step is declared once, and the parser knows exactly the declared steps.
    @Test func everyStepIsDeclaredOnce() {
        #expect(Set(StepGrammar.keywords).count == StepGrammar.keywords.count)
        #expect(StepGrammar.all.allSatisfy { !$0.does.isEmpty && ($0.shorthand != nil || !$0.fields.isEmpty) })
    }
}
