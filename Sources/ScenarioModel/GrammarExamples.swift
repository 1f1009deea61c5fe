import Foundation

/// The scenario the steps' and checks' `examples` are written in: two
/// devices, the example app's built-in roles, and two executables of one's
/// own (found in a file system fixed in memory). The round-trip test reads
/// each example there, writes it back and reads it again.
package enum GrammarExamples {
    package static let header = """
        summary: every form of every step and check
        devices: [iPhone, iPad]
        processes:
          app: { role: main-app }
          widget: { role: widget }
          pad: { role: main-app, device: iPad }
          program: { exec: [program] }
          shortcut: { exec: [shortcut], target: intent }
        steps:

        """

    package static let files = FixedScenarioFiles(executables: [
        "program": .found(path: "/opt/examples/program", linkage: .links),
        "shortcut": .found(path: "/opt/examples/shortcut", linkage: .links),
    ])

    /// Every example as a step of the scenario: `  - KEYWORD: BODY`, each check in an `expect`.
    package static var steps: [String] {
        StepGrammar.all.flatMap { spec in spec.examples.map { "  - \(spec.keyword): \($0)" } }
            + CheckGrammar.all.flatMap { spec in spec.examples.map { "  - expect: \($0)" } }
    }

    /// The scenario with these steps, as the parser reads it.
    package static func scenario(_ steps: [String], file: String = "/examples/grammar.yaml") throws -> Scenario {
        try ScenarioParser.parse(header + steps.joined(separator: "\n") + "\n", file: file, fileSystem: files)
    }
}
