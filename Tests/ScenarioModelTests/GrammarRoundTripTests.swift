import Foundation
import PropertyList
import SpecFormat
import Testing

@testable import ScenarioModel

/// Every form of every step and check, from the grammar's own examples (a
/// new one is covered as it is declared), and the random generator's
/// histories: read, written back by StepWriter and read again, they are
/// the same steps.
@Suite struct GrammarRoundTripTests {
    /// The step read, written and read again is the same step, and writing it again writes the same text.
    static func expectRoundTrip(_ step: Step, _ source: String) throws {
        let written = StepWriter.lines(step)
        let again = try GrammarExamples.scenario(written, file: "/examples/written.yaml").steps
        try #require(again.count == 1, "\(source) was written as \(written)")
        #expect(again[0].action == step.action && again[0].exits == step.exits, "\(source) was written as:\n\(written.joined(separator: "\n"))")
        #expect(StepWriter.lines(again[0]) == written, "\(source)")
    }

    @Test func everyStepAndCheckExampleReadsBackAsItself() throws {
        for line in GrammarExamples.steps {
            let steps = try GrammarExamples.scenario([line]).steps
            try Self.expectRoundTrip(steps[0], line)
        }
    }

    /// Each declaration's examples show every form it takes: each of its fields, and its shorthand if it has one.
    @Test func theExamplesCoverEveryFieldAndForm() throws {
        func keys(_ example: String) throws -> (mapping: Bool, keys: Set<String>) {
            let node = try SpecNode.parse("x: " + example, file: "/examples/example.yaml").fields(allowed: ["x"])["x"]!
            guard case .mapping = node.node else { return (false, []) }
            return (true, Set(try node.entries().map(\.0)))
        }
        for spec in StepGrammar.all {
            #expect(!spec.examples.isEmpty, "step '\(spec.keyword)' has no examples")
            let forms = try spec.examples.map(keys)
            let used = forms.reduce(into: Set<String>()) { $0.formUnion($1.keys) }
            for field in spec.fields { #expect(used.contains(field.name), "no example of step '\(spec.keyword)' gives '\(field.name)'") }
            if spec.shorthand != nil { #expect(forms.contains { !$0.mapping }, "no example of step '\(spec.keyword)' is its shorthand") }
        }
        for spec in CheckGrammar.all {
            let used = try spec.examples.map(keys).reduce(into: Set<String>()) { $0.formUnion($1.keys) }
            #expect(!spec.examples.isEmpty, "check '\(spec.lead)' has no examples")
            for field in spec.fields { #expect(used.contains(field.name), "no example of check '\(spec.lead)' gives '\(field.name)'") }
        }
    }

    @Test func randomHistoriesReadBackAsThemselves() throws {
        for seed in UInt64(1)...30 {
            let text = RandomRun.generate(seed: seed, length: 60).yaml
            let scenario = try ScenarioParser.parse(text, file: "/tmp/random-\(seed).yaml", fileSystem: FixedScenarioFiles())
            let header = text.components(separatedBy: "\nsteps:\n")[0] + "\nsteps:\n"
            let written = scenario.steps.flatMap { StepWriter.lines($0.action) }.joined(separator: "\n")
            let again = try ScenarioParser.parse(header + written + "\n", file: "/tmp/random-again.yaml", fileSystem: FixedScenarioFiles())
            #expect(again.steps == scenario.steps, "seed \(seed)")
        }
    }

    /// A step no declaration writes is written as one the parser refuses, naming it, rather than a trap or nothing.
    @Test func aStepNoDeclarationWritesIsRefusedWhenRead() {
        let written = StepWriter.lines(.command(process: "app", .get(key: "k")))
        let error = #expect(throws: SpecError.self) { try GrammarExamples.scenario(written) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("unknown step 'no-writer-for'"), "\(written)")
    }
}
