import SimulationValues

/// How a user's App Intent is run and how its run ends: shared by
/// SimulatedAppIntents, which runs them, and the runner and GroupSimTesting,
/// which judge them (docs/api.md, "SimulatedAppIntents").
package enum AppIntentRun {
    /// How long `perform()` may take: Apple gives an intent about 30 seconds
    /// before the system cancels it (`IntentCancellationReason.timeout`).
    package static let timeLimitSeconds: Double = 30
    /// Seconds in place of `timeLimitSeconds`, for a test that shows the bound without waiting for it.
    package static let timeLimitVariable = SimulationEnvironment.Name.intentTimeLimit

    /// The exit status of an intent executable's one-shot run.
    package enum Status {
        /// `perform()` returned.
        package static let done: Int32 = 0
        /// `perform()` threw.
        package static let failed: Int32 = 1
        /// No intent of that name, a parameter it does not take, lacks or cannot read, or words that are not NAME=VALUE.
        package static let invalid: Int32 = 2
        /// `perform()` did not return within the time limit (as `timeout(1)` says it).
        package static let timedOut: Int32 = 124
    }

    /// The time limit a process was given: `timeLimitVariable`'s seconds (more than 0, at most an hour), else Apple's 30;
    /// `problem` says why a value that is set was not taken.
    package static func timeLimit(environment: [String: String]) -> (seconds: Double, problem: String?) {
        guard let text = environment[timeLimitVariable] else { return (timeLimitSeconds, nil) }
        guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
            return (
                timeLimitSeconds,
                "\(timeLimitVariable)=\(text) is not a number of seconds above 0 and at most 3600; the limit is Apple's \(Int(timeLimitSeconds)) s"
            )
        }
        return (seconds, nil)
    }
}
