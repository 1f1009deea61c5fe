import Foundation
import GroupSimTesting
import Testing

/// A look at a program's output right after `launch` has the lines the program wrote before it said ready: they are
/// in its stdout pipe, perhaps not yet read, when `ready` arrives on its control channel, so the look reads the pipe
/// first. The readers hold what they read until someone catches up (a test seam, `CHILDPROCESS_TEST_HOLD_OUTPUT`): a
/// look that does not catch up misses the line every time.
@Suite struct OutputCatchUpTests {
    @Test func theFirstLookAfterLaunchHasTheLinesWrittenBeforeReady() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let app = try await simulation.launch(
                "settings-examples", arguments: ["wait-input"], environment: ["CHILDPROCESS_TEST_HOLD_OUTPUT": "1"])
            #expect(app.standardOutputLines == ["ready=true"])
            #expect(app.standardErrorLines == [])
        }
    }
}
