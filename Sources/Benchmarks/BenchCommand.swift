import ArgumentParser
import Foundation
import GroupDefaults

/// `groupsim-bench`: measurements that live in benchmarks/, not in timed tests.
package struct BenchCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "groupsim-bench",
        abstract:
            "Measure propagation latency, bursts, process start-up, the cloud's device-to-device latency, and the in-process API and the property-list codec against Foundation (build with -c release).",
        subcommands: [
            PropagationBenchmark.self, BurstBenchmark.self, StartupBenchmark.self, CloudBenchmark.self, FoundationBenchmark.self,
            ControlChannelBenchmark.self, CurvesBenchmark.self, CodecBenchmark.self,
            ObserverProcess.self, CloudObserverProcess.self,
        ]
    )

    package init() {}
}

/// Refuses a count outside `range`, naming the option: a negative count
/// would make an impossible range, a huge one run for ever.
func requireCount(_ value: Int, _ option: String, in range: ClosedRange<Int>) throws {
    guard range.contains(value) else { throw ValidationError("\(option) must be from \(range.lowerBound) to \(range.upperBound), found \(value)") }
}

/// Options every benchmark shares.
struct BenchOptions: ParsableArguments {
    @Option(help: "Simulation root (default: a new folder under $TMPDIR, removed afterwards).")
    var root: String?

    @Option(help: "The app-group suite written and observed.")
    var domain = "group.com.example.bench"

    @Option(
        help: ArgumentHelp(
            "Set the root's durability first (default: the root's own setting; a new root's is durable).",
            valueName: "durable|process"))
    var durability: String?

    func validate() throws {
        if let durability, Durability(rawValue: durability) == nil {
            throw ValidationError("--durability must be durable or process, found '\(durability)'")
        }
    }

    /// The root to use, and whether this run made it (and so removes it).
    func makeRoot() throws -> (path: String, temporary: Bool) {
        let made: (path: String, temporary: Bool)
        if let root {
            made = (root, false)
        } else {
            let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-bench-\(getpid())")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            made = (path, true)
        }
        if let chosen = durability.flatMap(Durability.init(rawValue:)) { try SimulationRoot(path: made.path).setDurability(chosen) }
        return made
    }

    /// What the run's commits do, for the report's first line.
    func commitsDescription(root: String) -> String {
        switch (try? SimulationRoot(path: root).durability()) ?? .durable {
        case .durable: "durable commits (journal flushed, then exchanged)"
        case .process: "process-durable commits (exchanged, nothing flushed)"
        }
    }
}

/// Milliseconds with three decimals, from nanoseconds.
func milliseconds(_ nanoseconds: UInt64) -> String { String(format: "%.3f", Double(nanoseconds) / 1e6) }
func milliseconds(_ nanoseconds: Double) -> String { String(format: "%.3f", nanoseconds / 1e6) }
