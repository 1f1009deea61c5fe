import Foundation
import TestSupport
import Testing

/// A one-shot `exec:` program (it does its work and exits) that links
/// SimulatedFoundation, launched as the app's intent: its channel serves it
/// as it loads and closes as it exits, so the launch is judged by its exit
/// status and output, never by whether its channel answered first.
extension ExecProcessTests {
    /// The intent `settings-examples audio-volume UNIT`: `percent` prints the volume and exits 0; another unit says so on
    /// stderr and exits 2.
    func oneShotScenario(_ name: String, unit: String, steps: String) throws -> String {
        try write(
            name + ".yaml",
            """
            summary: the intent is a one-shot program of the user's own
            processes:
              volume: { exec: [\(Self.settingsExamples), audio-volume, \(unit)], target: intent, start-timeout: 15 }
            steps:
            \(steps)
            """)
    }

    @Test func aOneShotIntentLaunchesWhetherItExitsBeforeOrAfterItsChannelAnswers() throws {
        let worked = try oneShotScenario(
            "worked", unit: "percent",
            steps: """
                  - launch: volume
                  - wait: { for: exit, in: volume, status: 0 }
                  - expect: { in: volume, output: { matches: "^volume=100$" } }
                """)
        let refused = try oneShotScenario(
            "refused", unit: "parsecs",
            steps: """
                  - launch: volume
                  - wait: { for: exit, in: volume, status: 2 }
                  - expect: { in: volume, output: { matches: "unknown unit 'parsecs'", stream: stderr } }
                """)
        // The race was lost about one run in two: twenty of each show it is gone.
        let result = try groupsim(["run", "--repeat", "20", worked, refused], limit: 240)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("scenarios: 40 passed, 0 failed"), "\(result.stdout)")
    }

    @Test func aOneShotIntentThatMustFailIsJudgedByItsStatusAndError() throws {
        let fails = try oneShotScenario(
            "fails", unit: "parsecs", steps: "  - launch: { process: volume, fails: \"unknown unit 'parsecs'\", status: 2 }")
        let result = try groupsim(["run", "--repeat", "20", fails], limit: 240)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("scenarios: 20 passed, 0 failed"), "\(result.stdout)")
    }

    @Test func aOneShotIntentThatDoesNotFailAsItShouldIsReportedTruly() throws {
        let succeeds = try oneShotScenario(
            "succeeds", unit: "percent", steps: "  - launch: { process: volume, fails: \"unknown unit\", status: 2 }")
        let saysOther = try oneShotScenario(
            "says-other", unit: "parsecs", steps: "  - launch: { process: volume, fails: \"no such volume\", status: 2 }")
        let otherStatus = try oneShotScenario(
            "other-status", unit: "parsecs", steps: "  - launch: { process: volume, fails: \"unknown unit\", status: 3 }")
        let keepsRunning = try write(
            "keeps-running.yaml",
            """
            summary: must fail - the program does not exit
            processes:
              volume: { exec: [\(Self.settingsExamples), wait-input], target: intent, start-timeout: 1 }
            steps:
              - launch: { process: volume, fails: "unknown unit", status: 2 }
            """)
        let result = try groupsim(["run", succeeds, saysOther, otherStatus, keepsRunning], limit: 120)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        for message in [
            "volume exited with status 0, expected 2; its last lines (1 of 1):\n        [stdout] volume=100",
            "volume failed as expected, but did not say \"no such volume\"; it said: settings-examples: unknown unit 'parsecs'",
            "volume exited with status 2, expected 3: settings-examples: unknown unit 'parsecs'",
            "volume was still running 1 s after it started (its start-timeout); it should have exited with status 2, saying \"unknown unit\"",
        ] {
            #expect(result.stdout.contains(message), "\(message)\n\(result.stdout)")
        }
        #expect(!result.stdout.contains("kept running"), "\(result.stdout)")
        #expect(!result.stdout.contains("closed its control channel before"), "\(result.stdout)")
    }
}
