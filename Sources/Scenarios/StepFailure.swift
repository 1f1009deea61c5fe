/// Why a scenario stopped: the step, what was expected and what was found.
package struct StepFailure: Error, Sendable, CustomStringConvertible {
    package let line: Int
    package let step: String
    package let message: String
    package var description: String { "line \(line): \(step): \(message)" }
}

/// A failure inside a step, before the step's line is known.
struct CheckFailed: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
