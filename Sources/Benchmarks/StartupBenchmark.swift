import ArgumentParser
import ChildProcess
import Foundation
import Histogram
import SharedFiles

/// How long a simulated process takes from spawn to its "ready" event
/// (and, for the intent extension, to its exit after performing an intent).
struct StartupBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start-to-ready", abstract: "Time from spawning main-app / widget / intent-extension to ready (or done).")

    @OptionGroup var options: BenchOptions
    @Option(help: "Starts per executable.") var runs = 50

    func validate() throws { try requireCount(runs, "--runs", in: 1...10_000) }

    func run() throws {
        let (root, temporary) = try options.makeRoot()
        defer { if temporary { try? FileManager.default.removeItem(atPath: root) } }
        let folder = (CommandLine.arguments[0] as NSString).deletingLastPathComponent
        let environment = ["GROUPSIM_ROOT": root]
        print("start-to-ready: \(runs) starts each (ms)")
        for role in ["main-app", "widget"] {
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
            for _ in 0..<runs {
                let start = MonotonicClock.now()
                let process = try RunningProcess(folder + "/" + role, ["--json"], environment: environment)
                try process.waitForLine(timeout: 30) { $0.hasPrefix("{\"event\":\"ready\"") }
                _ = histogram.record(MonotonicClock.now() - start)
                process.closeStdin()
                try process.waitForExit()
            }
            report(role + " (spawn → ready)", histogram)
        }
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for _ in 0..<runs {
            let start = MonotonicClock.now()
            let process = try RunningProcess(folder + "/intent-extension", ["--json", "CountNote"], environment: environment)
            guard try process.waitForExit(timeout: 30) == 0 else { throw ValidationError("intent-extension failed: \(process.stderr)") }
            _ = histogram.record(MonotonicClock.now() - start)
        }
        report("intent-extension (spawn → intent committed → exit)", histogram)
    }

    func report(_ name: String, _ histogram: Histogram<UInt64>) {
        print("  \(name): p50 \(milliseconds(histogram.valueAtPercentile(50)))  p90 \(milliseconds(histogram.valueAtPercentile(90)))  max \(milliseconds(histogram.max))")
    }
}
