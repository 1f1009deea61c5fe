import Foundation
import ScenarioModel
import Testing

/// The step table and the check table in docs/scenarios.md are generated
/// from the grammar (`StepGrammar`, `CheckGrammar`): these fail when the
/// docs and the grammar drift apart. To rewrite the tables from the grammar:
/// `GROUPSIM_UPDATE_DOCS=1 swift test --filter ScenarioGrammarDocs` (serialized: both rewrite one file).
@Suite(.serialized) struct ScenarioGrammarDocsTests {
    static let docs = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("docs/scenarios.md")

    /// Where the table under `heading` is: the indices of its lines, from its header row (`header`) to the last row.
    static func table(under heading: String, header: String, in lines: [String]) -> Range<Int>? {
        guard let section = lines.firstIndex(of: heading), let start = lines[section...].firstIndex(where: { $0.hasPrefix(header) }) else {
            return nil
        }
        let end = lines[start...].firstIndex { !$0.hasPrefix("|") } ?? lines.endIndex
        return start..<end
    }

    /// The docs' table under `heading` is `generated`, or is rewritten to it with GROUPSIM_UPDATE_DOCS=1.
    static func expectTable(under heading: String, header: String, _ generated: String, from source: String) throws {
        var lines = try String(contentsOf: docs, encoding: .utf8).components(separatedBy: "\n")
        let range = try #require(table(under: heading, header: header, in: lines), "docs/scenarios.md has no table under '\(heading)'")
        if ProcessInfo.processInfo.environment["GROUPSIM_UPDATE_DOCS"] == "1" {
            lines.replaceSubrange(range, with: generated.components(separatedBy: "\n"))
            try lines.joined(separator: "\n").write(to: docs, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            lines[range].joined(separator: "\n") == generated,
            """
            docs/scenarios.md's table under '\(heading)' differs from the grammar (\(source)); \
            run GROUPSIM_UPDATE_DOCS=1 swift test --filter ScenarioGrammarDocs, or put this table there:
            \(generated)
            """)
    }

    @Test func stepTableMatchesTheGrammar() throws {
        try Self.expectTable(under: "## Steps", header: "| step |", StepGrammar.table, from: "StepGrammar, Sources/ScenarioModel/*Steps.swift")
    }

    @Test func checkTableMatchesTheGrammar() throws {
        try Self.expectTable(
            under: "### Checking", header: "| check |", CheckGrammar.table, from: "CheckGrammar, Sources/ScenarioModel/*Checks.swift")
    }

    /// Every step and check form is declared once, and the parser knows exactly the declared steps.
    @Test func everyStepAndCheckIsDeclaredOnce() {
        #expect(Set(StepGrammar.keywords).count == StepGrammar.keywords.count)
        #expect(StepGrammar.all.allSatisfy { !$0.does.isEmpty && ($0.shorthand != nil || !$0.fields.isEmpty) })
        let leads = CheckGrammar.all.map(\.lead)
        #expect(Set(leads).count == leads.count, "\(leads)")
        #expect(CheckGrammar.all.allSatisfy { spec in !spec.checks.isEmpty && spec.fields.contains { $0.name == spec.lead && $0.required } })
    }
}
