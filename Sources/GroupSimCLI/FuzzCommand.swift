import ArgumentParser
import Foundation
import ScenarioModel
import Scenarios
import Terminal

/// `groupsim fuzz`: randomized histories against real processes, checked
/// against a model; a failure is shrunk and written out as a scenario.
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract:
            "Run randomized histories of the app, the widget and the iCloud store on two devices against real processes, and check them against a model.",
        discussion: """
            Each run is a seed: the same seed gives the same history. A failing history is shrunk to the fewest \
            operations that still fail and written as an ordinary scenario file (random-SEED.yaml) to keep as a regression.
            """)

    @Option(help: "The first seed (default: a random one, printed).") var seed: UInt64?
    @Option(help: "How many histories (seeds seed, seed+1, …; the last may be at most 18446744073709551615).") var runs = 10
    @Option(help: "Operations per history.") var length = 30
    @Option(help: "Folder for the shrunk scenario of each failure.") var out = "."
    @Flag(help: "Print the scenario each seed makes instead of running it.") var print = false
    @Option(help: "Run this many histories at a time (each has its own root, processes and cloud); failures are shrunk one at a time after.")
    var jobs = 1

    func validate() throws {
        guard (1...100_000).contains(runs) else { throw ValidationError("--runs must be from 1 to 100000") }
        guard (1...2000).contains(length) else { throw ValidationError("--length must be from 1 to 2000") }
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be from 1 to 64, found \(jobs)") }
        // A seed is a name: a range that would pass the largest one is refused, never wrapped to 0 without a word.
        if let seed, seed.addingReportingOverflow(UInt64(runs - 1)).overflow {
            throw ValidationError(
                "--seed \(seed) with --runs \(runs) goes past the largest seed (\(UInt64.max)); start at most at \(UInt64.max - UInt64(runs - 1))")
        }
    }

    func run() throws {
        let output = LineWriter.standardOutput
        let style = TerminalStyle.forStandardOutput()
        let first = self.seed ?? UInt64.random(in: 1...UInt64(1) << 48)
        /// The seed of run `index` (`validate` keeps the range within UInt64; a random first seed is below 2^48).
        @Sendable func seed(_ index: Int) -> UInt64 { first + UInt64(index) }
        if print {
            for index in 0..<runs { output.write(RandomRun.generate(seed: seed(index), length: length).yaml) }
            return
        }
        // Made before anything runs: a failure found after a long shrink must have somewhere to go. Removed
        // again at the end if it was made here and nothing failed.
        let outExisted = FileManager.default.fileExists(atPath: out)
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            throw ValidationError("--out \(out): cannot make the folder for failing histories: \(error.localizedDescription)")
        }
        output.write(
            "fuzz: \(runs) histories of \(length) operations, seeds \(first)…\(seed(runs - 1))" + (jobs > 1 ? ", \(jobs) at a time" : ""))
        let runner = ScenarioRunner(binaries: try ScenarioRunner.defaultBinaries())
        LiveProcesses.shared.endAllOnInterrupt()
        StandardOutput.beforeEndingOnClosedOutput { LiveProcesses.shared.endAll() }
        let scratch = NSTemporaryDirectory() + "/groupsim-fuzz-\(getpid())"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }

        /// Runs a history as a scenario; what failed, if anything.
        @Sendable func failure(of history: RandomRun) -> String? {
            let path = scratch + "/random-\(history.seed).yaml"
            do {
                try history.yaml.write(toFile: path, atomically: true, encoding: .utf8)
                return runner.run(try ScenarioParser.load(path, fileSystem: DiskScenarioFiles())).failure?.description
            } catch {
                return "the generated scenario is not valid: \(error)"
            }
        }

        // Each history runs alone (its own root, processes and cloud), so several run at once as
        // scenarios do; a line is written as each ends, in the order they end.
        let length = length
        let failures = ParallelRuns.run(runs, jobs: jobs, while: { LiveProcesses.shared.interruption == nil }) { index -> (RandomRun, String)? in
            let history = RandomRun.generate(seed: seed(index), length: length)
            guard let problem = failure(of: history) else {
                output.write("✔ seed \(history.seed)")
                return nil
            }
            output.write("\(style.error("✘")) seed \(history.seed): \(problem)")
            return (history, problem)
        }.compactMap { $0 }
        // Shrinking runs a failing history many times over: one at a time, after the others.
        for (history, _) in failures {
            output.write("  shrinking seed \(history.seed) …")
            let smallest = history.shrunk { failure(of: $0) != nil }
            let path = (out as NSString).appendingPathComponent("random-\(history.seed).yaml")
            try smallest.yaml.write(toFile: path, atomically: true, encoding: .utf8)
            output.write("  \(smallest.operations.count) of \(history.operations.count) operations still fail: \(path) (groupsim run \(path))")
        }
        let failed = failures.count
        if failed == 0 && !outExisted { rmdir(out) }
        output.write("fuzz: \(runs - failed) passed, \(failed) failed (first seed \(first))")
        if failed > 0 { throw ExitCode(1) }
    }
}
