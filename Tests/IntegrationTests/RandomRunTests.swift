import Foundation
import Scenarios
import Testing
import TestSupport

/// Randomized histories: a seed always gives the same history, the model's
/// checks are live (a wrong one fails against the real processes), and a
/// failure shrinks to the operations that cause it.
@Suite struct RandomRunTests {
    let folder = TemporaryRoot()

    @Test func aSeedAlwaysGivesTheSameHistory() {
        #expect(RandomRun.generate(seed: 42, length: 50).yaml == RandomRun.generate(seed: 42, length: 50).yaml)
        #expect(RandomRun.generate(seed: 42, length: 50).operations != RandomRun.generate(seed: 43, length: 50).operations)
        let printed = try? runBounded(BuiltExecutable.path("groupsim"), ["fuzz", "--seed", "42", "--runs", "1", "--length", "50", "--print"])
        #expect(printed?.stdout == RandomRun.generate(seed: 42, length: 50).yaml + "\n")
    }

    @Test func historiesPassAgainstTheRealProcessesAndAWrongCheckFails() throws {
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let result = try runBounded(BuiltExecutable.path("groupsim"), ["fuzz", "--seed", "100", "--runs", "4", "--length", "40", "--out", folder.path],
                                    environment: ["TMPDIR": tmp], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("fuzz: 4 passed, 0 failed (first seed 100)"))
        // The same history with one expected value changed must fail on that check.
        let history = RandomRun.generate(seed: 100, length: 40)
        let text = history.yaml
        guard let line = text.split(separator: "\n").first(where: { $0.contains("{ file: group.com.example.notes, device: iPhone, key: c") || $0.contains("{ file: group.com.example.notes, device: iPad, key: c") }) else {
            Issue.record("seed 100 has no counter check: \(text)")
            return
        }
        let wrong = text.replacingOccurrences(of: String(line), with: String(line).replacingOccurrences(of: "value: ", with: "value: 1000"))
        let path = folder.path + "/wrong.yaml"
        try wrong.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try runBounded(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(run.status == 1 && run.stdout.contains("should be 1000"), "\(run.stdout)")
    }

    @Test func aFailureShrinksToWhatCausesIt() {
        func isKill(_ operation: RandomRun.Operation) -> Bool { if case .killAndRelaunch = operation { true } else { false } }
        // The first seed whose history kills a process.
        guard let history = (1...100).lazy.map({ RandomRun.generate(seed: $0, length: 60) }).first(where: { $0.operations.contains(where: isKill) }),
              let culprit = history.operations.first(where: isKill) else {
            Issue.record("no history of seeds 1…100 kills a process")
            return
        }
        // As if that kill were what breaks the run.
        let smallest = history.shrunk { $0.operations.contains(culprit) }
        #expect(smallest.operations == [culprit])
        #expect(smallest.seed == history.seed)
        #expect(smallest.yaml.contains("  - kill: "))
    }
}
