import Foundation
import ScenarioModel
import Testing

/// The step table in docs/scenarios.md is generated from the step grammar
/// (`StepGrammar`): it fails when the two drift apart. To rewrite the
/// table from the grammar: `GROUPSIM_UPDATE_DOCS=1 swift test --filter ScenarioGrammarDocs`.
@Suite struct ScenarioGrammarDocsTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/scenarios.md")

    /// The lines of the table under "## Steps": from its header row to the first line that is not a row.
    static func stepTable(in text: String) -> Range<String.Index>? {
        guard let section = text.range(of: "\n## Steps\n"),
              let start = text.range(of: "\n| step |", range: section.upperBound..<text.endIndex) else { return nil }
        var end = start.lowerBound
        var lines = text[text.index(after: start.lowerBound)...].split(separator: "\n", omittingEmptySubsequences: false).makeIterator()
        end = text.index(after: start.lowerBound)
        while let line = lines.next(), line.hasPrefix("|") { end = text.index(end, offsetBy: line.count + 1) }
        return text.index(after: start.lowerBound)..<text.index(before: end)
    }

    @Test func stepTableMatchesTheGrammar() throws {
        var text = try String(contentsOf: Self.docs, encoding: .utf8)
        let range = try #require(Self.stepTable(in: text), "docs/scenarios.md has no step table under '## Steps'")
        let generated = StepSpec.table
        if ProcessInfo.processInfo.environment["GROUPSIM_UPDATE_DOCS"] == "1" {
            text.replaceSubrange(range, with: generated)
            try text.write(to: Self.docs, atomically: true, encoding: .utf8)
            return
        }
        #expect(String(text[range]) == generated, """
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
