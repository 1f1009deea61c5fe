import ScenarioModel
import SpecFormat
import Testing

/// Expects each scenario text to be refused by `parse` with an error whose message contains the case's words.
func expectRefusals(
    _ cases: [(steps: String, message: String)], _ parse: (String) throws -> Scenario, sourceLocation: SourceLocation = #_sourceLocation
) {
    for (steps, message) in cases {
        do {
            _ = try parse(steps + "\n")
            Issue.record("accepted: \(steps)", sourceLocation: sourceLocation)
        } catch let error as SpecError {
            #expect(error.message.contains(message), "\(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(steps): not a file:line:column error: \(error)", sourceLocation: sourceLocation)
        }
    }
}
