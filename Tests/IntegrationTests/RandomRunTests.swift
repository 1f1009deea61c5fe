import Foundation
import TestSupport
import Testing

@testable import ScenarioModel

/// Randomized histories: a seed always gives the same history, the model's
/// checks are live (a wrong one fails against the real processes), and a
/// failure shrinks to the operations that cause it.
@Suite struct RandomRunTests {
    let folder = TemporaryRoot()

    /// The seeds CI runs (1 to 20) cover the clocks and the churn the cloud's
    /// bounds are about: the iPad's clock off by up to the most a clock may be
    /// (ten years, both ways; a day and an hour, past the day a stamp may lead
    /// by) and histories that remove more keys than a store keeps.
    @Test func theFixedSeedsCoverSkewsUpToTheBoundAndRemovalChurn() {
        let histories = (1...20).map { RandomRun.generate(seed: UInt64($0), length: 40) }
        let skews = Set(histories.map(\.padClockSkewMilliseconds))
        #expect(skews.isSuperset(of: [315_360_000_000, -315_360_000_000, 90_000_000, -90_000_000]), "\(skews.sorted())")
        let churning = histories.filter { $0.operations.contains(.kvsChurn(rounds: 5)) }
        #expect(churning.count >= 3, "\(churning.map(\.seed))")
        #expect(histories[2].yaml.contains("remove: true") && histories[2].yaml.contains("churn4-{i}"))
    }

    @Test func aSeedAlwaysGivesTheSameHistory() {
        #expect(RandomRun.generate(seed: 42, length: 50).yaml == RandomRun.generate(seed: 42, length: 50).yaml)
        #expect(RandomRun.generate(seed: 42, length: 50).operations != RandomRun.generate(seed: 43, length: 50).operations)
        let printed = try? runBounded(BuiltExecutable.path("groupsim"), ["fuzz", "--seed", "42", "--runs", "1", "--length", "50", "--print"])
        #expect(printed?.stdout == RandomRun.generate(seed: 42, length: 50).yaml + "\n")
    }

    @Test func historiesPassAgainstTheRealProcessesAndAWrongCheckFails() throws {
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let result = try runBounded(
            BuiltExecutable.path("groupsim"), ["fuzz", "--seed", "100", "--runs", "4", "--length", "40", "--jobs", "2", "--out", folder.path],
            environment: ["TMPDIR": tmp], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("fuzz: 4 passed, 0 failed (first seed 100)"))
        // Two at a time, each history's verdict on a line of its own.
        #expect(result.stdout.contains("seeds 100…103, 2 at a time"), "\(result.stdout)")
        #expect((100...103).allSatisfy { result.stdout.contains("✔ seed \($0)\n") }, "\(result.stdout)")
        // The same history with one expected value changed must fail on that check.
        let history = RandomRun.generate(seed: 100, length: 40)
        let text = history.yaml
        guard
            let line = text.split(separator: "\n").first(where: {
                $0.contains("{ file: group.com.example.notes, device: iPhone, key: c")
                    || $0.contains("{ file: group.com.example.notes, device: iPad, key: c")
            })
        else {
            Issue.record("seed 100 has no counter check: \(text)")
            return
        }
        let wrong = text.replacingOccurrences(of: String(line), with: String(line).replacingOccurrences(of: "value: ", with: "value: 1000"))
        let path = folder.path + "/wrong.yaml"
        try wrong.write(toFile: path, atomically: true, encoding: .utf8)
        let run = try runBounded(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(run.status == 1 && run.stdout.contains("should be 1000"), "\(run.stdout)")
        // And so must the history with the cloud's winner of a key said to be the other device's write.
        guard let cloudLine = text.split(separator: "\n").last(where: { $0.contains("{ cloud: com.example.notes") && $0.contains(", by: ") }) else {
            Issue.record("seed 100 has no check of a cloud value: \(text)")
            return
        }
        let other = cloudLine.hasSuffix("by: iPad }") ? "by: iPhone }" : "by: iPad }"
        let mutated = String(cloudLine).replacingOccurrences(of: cloudLine.hasSuffix("by: iPad }") ? "by: iPad }" : "by: iPhone }", with: other)
        try text.replacingOccurrences(of: String(cloudLine), with: mutated).write(toFile: path, atomically: true, encoding: .utf8)
        let cloudRun = try runBounded(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(cloudRun.status == 1 && cloudRun.stdout.contains("write, found"), "\(cloudRun.stdout)")
    }

    // MARK: The model

    func world(_ seed: UInt64, _ operations: [RandomRun.Operation]) -> (RandomWorld, [String]) {
        let history = RandomRun(seed: seed, operations: operations)
        var world = RandomWorld(history: history)
        let steps = operations.flatMap { world.perform($0) }
        return (world, steps)
    }

    @Test func cloudWritesAreOrderedByTheDevicesClocksThenByTheOrderADeviceMadeThem() {
        let writes: [RandomRun.Operation] = [
            .kvsSet(process: "app", key: "v0", value: 1), .kvsSet(process: "pad", key: "v0", value: 2),
            .kvsSet(process: "app", key: "v0", value: 3), .kvsConcurrent(key: "v1", appValue: 4, padValue: 5),
        ]
        // An even seed puts the iPad's clock an hour ahead: its writes win whenever they were made.
        let (ahead, _) = world(2, writes)
        #expect(ahead.winners["v0"]?.value == .integer(2) && ahead.winners["v0"]?.device == "iPad")
        #expect(ahead.winners["v1"]?.value == .integer(5))
        // An odd seed puts it an hour behind: the iPhone's last write wins.
        let (behind, _) = world(3, writes)
        #expect(behind.winners["v0"]?.value == .integer(3) && behind.winners["v0"]?.device == "iPhone")
        #expect(behind.winners["v1"]?.value == .integer(4))
    }

    @Test func aDeviceRemovesOnlyAKeyItHasWritten() {
        // The iPad's app never wrote v0: whether the iPhone's write reached it first is timing, so the removal is left out.
        let (unseen, unseenSteps) = world(2, [.kvsSet(process: "app", key: "v0", value: 1), .kvsRemove(process: "pad", key: "v0")])
        #expect(!unseenSteps.contains { $0.contains("kvs-remove") })
        #expect(unseen.winners["v0"]?.value == .integer(1))
        let (own, ownSteps) = world(3, [.kvsSet(process: "app", key: "v0", value: 1), .kvsRemove(process: "app", key: "v0")])
        #expect(ownSteps.contains("  - kvs-remove: { in: app, key: v0 }"))
        #expect(own.winners["v0"] != nil && own.winners["v0"]?.value == nil)
    }

    @Test func faultsFlipAndThoseThatNeedTheCloudWaitForIt() {
        let (_, steps) = world(
            1,
            [
                .toggleCloud, .togglePartition(device: "iPad"), .pushFault(device: "iPad", duplicate: true, count: 2),
                .toggleCloud, .togglePartition(device: "iPad"), .toggleAgent(device: "iPhone"), .toggleOnline(device: "iPad"),
            ])
        #expect(
            steps == [
                "  - kill-cloud:", "  - restart-cloud:", "  - network: { device: iPad, partition: true }",
                "  - kill-agent: iPhone", "  - offline: iPad",
            ])
        // The end undoes every fault before it waits for agreement.
        var (left, _) = world(1, [.togglePartition(device: "iPad"), .toggleAgent(device: "iPhone"), .toggleOnline(device: "iPad"), .toggleCloud])
        let settled = left.settle()
        #expect(Array(settled.prefix(4)) == ["  - restart-cloud:", "  - online: iPad", "  - restart-agent: iPhone", "  - wait-cloud:"])
    }

    @Test func addedSuitesAreSearchedBelowTheOwnSuiteTheOneAddedLastFirst() {
        var (world, _) = world(
            5, [.toggleSuite(process: "app", suite: "group.com.example.extra1"), .toggleSuite(process: "app", suite: "group.com.example.extra2")])
        world.addedSuiteFiles["iPhone"] = [
            "group.com.example.extra1": ["k0": .string("one"), "k1": .string("only-one")],
            "group.com.example.extra2": ["k0": .string("two")],
        ]
        #expect(world.effective("k0", in: "app")! == (.string("two"), "group.com.example.extra2"))
        #expect(world.effective("k1", in: "app")! == (.string("only-one"), "group.com.example.extra1"))
        #expect(world.effective("k0", in: "widget") == nil)
        world.files["iPhone"]!["k0"] = .integer(7)
        #expect(world.effective("k0", in: "app")! == (.integer(7), "group.com.example.notes"))
        _ = world.perform(.toggleSuite(process: "app", suite: "group.com.example.extra2"))
        world.files["iPhone"]!["k0"] = nil
        #expect(world.effective("k0", in: "app")! == (.string("one"), "group.com.example.extra1"))
    }

    @Test func aFailureShrinksToWhatCausesIt() {
        func isKill(_ operation: RandomRun.Operation) -> Bool { if case .killAndRelaunch = operation { true } else { false } }
        // The first seed whose history kills a process.
        guard let history = (1...100).lazy.map({ RandomRun.generate(seed: $0, length: 60) }).first(where: { $0.operations.contains(where: isKill) }),
            let culprit = history.operations.first(where: isKill)
        else {
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
