/// Every error of the Scenarios layer, turned into text in one place
/// (`description`): what a run's report, its JUnit and JSON, and the CLI say.
package enum ScenarioRunError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A step stopped the scenario: the scenario file's line of the step (or of its failing check), the step
    /// (its summary, or "setup" before the first), and what was expected and found.
    case step(line: Int, step: String, message: String)
    /// A failure inside a step, before the step's line is known: the step that runs it adds it (`step`).
    case check(String)
    /// A run that cannot start at all (the executables, the warden).
    case setup(String)
    /// A JUnit report given to `JUnitReport.merge` that is not one `render` wrote.
    case merge(String)

    package var description: String {
        switch self {
        case .step(let line, let step, let message): "line \(line): \(step): \(message)"
        case .check(let text), .setup(let text), .merge(let text): text
        }
    }

    /// The scenario file's line a report names: a step's; 0 for what is not a step's (the run's setup).
    package var line: Int { if case .step(let line, _, _) = self { line } else { 0 } }

    /// The step a report names: its summary; "setup" for what is not a step's.
    package var step: String { if case .step(_, let step, _) = self { step } else { "setup" } }

    /// What failed, without where.
    package var message: String { if case .step(_, _, let message) = self { message } else { description } }

    /// Whether the step's place is known already (a step's failure is passed on as it is).
    var isStep: Bool { if case .step = self { true } else { false } }
}
