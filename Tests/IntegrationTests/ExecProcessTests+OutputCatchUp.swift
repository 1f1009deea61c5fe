import Foundation
import TestSupport
import Testing

/// A check on a program's output right after `launch` sees the lines it wrote before it said ready: `launch`
/// returns on `ready`, which comes on the control channel, while the lines are in the program's stdout pipe,
/// perhaps not yet read. The program here (`settings-examples wait-input`) prints `ready=true`, then reads its
/// stdin; the runner's readers hold what they read until a check catches up (a test seam,
/// `CHILDPROCESS_TEST_HOLD_OUTPUT`), so a check that does not catch up misses the line every time.
extension ExecProcessTests {
    @Test func anOutputCheckRightAfterLaunchSeesTheLinesWrittenBeforeReady() throws {
        let path = try write(
            "before-ready.yaml",
            """
            summary: the line written before ready is seen right after launch
            processes:
              program: { exec: [\(Self.settingsExamples), wait-input], env: { CHILDPROCESS_TEST_HOLD_OUTPUT: "1" } }
            steps:
              - launch: program
              - expect: { in: program, output: { matches: "^ready=true$" } }
              - expect: { in: program, saw: output, matches: "^ready=true$", times: 1 }
            """)
        let result = try groupsim(["run", path], limit: 120)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }
}
