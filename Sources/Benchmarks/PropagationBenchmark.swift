import ArgumentParser
import ChildProcess
import Foundation
import GroupDefaults
import Histogram
import PropertyList
import SharedFiles

/// Latency from `set` in this process to the observer callback in another,
/// one change at a time, with durable commits on a suite of N keys.
struct PropagationBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "propagation",
        abstract: "Latency from set() in one process to the observer callback in another.")

    @OptionGroup var options: BenchOptions
    @Option(help: "Changes measured.") var changes = 2000
    @Option(help: "Keys in the suite besides the probe.") var keys = 100
    @Option(help: "Changes run first and not measured.") var warmup = 100

    func validate() throws {
        try requireCount(changes, "--changes", in: 1...1_000_000)
        try requireCount(keys, "--keys", in: 0...100_000)
        try requireCount(warmup, "--warmup", in: 0...1_000_000)
    }

    func run() throws {
        let pair = try WriterAndObserver(options) { defaults in
            for index in 0..<keys { defaults.set(.string("value-\(index)-" + String(repeating: "x", count: 16)), forKey: "key-\(index)") }
            try defaults.flush()
        }
        defer { pair.removeRoot() }
        let (defaults, observer) = (pair.defaults, pair.observer)

        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        let before = defaults.domainStatistics
        var measured = 0
        for index in 1...(warmup + changes) {
            let latency = try pair.propagate(index)
            if index > warmup {
                _ = histogram.record(latency)
                measured += 1
            }
        }
        let after = defaults.domainStatistics
        observer.closeStdin()
        let stats = try observer.waitForLine(timeout: 30) { $0.hasPrefix("stats ") }
        try observer.waitForExit()

        let commits = CommitTimingsReport(before: before, after: after)
        let observerReloads = Self.field(stats, "reloads") ?? 0
        let observerReadNs = Self.field(stats, "reloadReadNs") ?? 0
        print(
            """
            propagation: \(measured) changes, \(keys + 1)-key suite, \(options.commitsDescription(root: pair.root))
              latency set → observer callback in another process (ms):
                p50 \(milliseconds(histogram.valueAtPercentile(50)))  p90 \(milliseconds(histogram.valueAtPercentile(90)))  \
            p99 \(milliseconds(histogram.valueAtPercentile(99)))  max \(milliseconds(histogram.max))  mean \(milliseconds(histogram.mean))
              where a change's time goes (mean per commit, ms; \(commits.count) commits):
                \(commits.line)
                observer: \(observerReloads) reloads, read+decode \(milliseconds(Double(observerReadNs) / Double(max(observerReloads, 1)))) ms each
            """)
    }

    static func field(_ line: String, _ name: String) -> Int? {
        line.split(separator: " ").first { $0.hasPrefix(name + "=") }.flatMap { Int($0.dropFirst(name.count + 1)) }
    }
}

/// A burst of sets in one process: how many commits it became, how many
/// reloads the observer did, and when the observer's view matched.
struct BurstBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "burst",
        abstract: "A burst of sets in one process: commits, reloads, and time until another process's view matches.")

    @OptionGroup var options: BenchOptions
    @Option(help: "Sets in the burst (distinct keys).") var sets = 10_000

    func validate() throws { try requireCount(sets, "--sets", in: 1...1_000_000) }

    func run() throws {
        let pair = try WriterAndObserver(options, observerArguments: ["--burst-count", "\(sets)"])
        defer { pair.removeRoot() }
        let (defaults, observer) = (pair.defaults, pair.observer)

        let before = defaults.domainStatistics
        let start = MonotonicClock.now()
        for index in 0..<sets { defaults.set(.integer(Int64(index)), forKey: "burst-\(index)") }
        let setsDone = MonotonicClock.now()
        let line = try observer.waitForLine(timeout: 120) { $0.hasPrefix("converged ") }
        let converged = UInt64(line.split(separator: " ")[1]) ?? 0
        try defaults.flush()
        let after = defaults.domainStatistics
        observer.closeStdin()
        let stats = try observer.waitForLine(timeout: 30) { $0.hasPrefix("stats ") }
        try observer.waitForExit()
        print(
            """
            burst: \(sets) sets of distinct keys in one process
              sets returned after \(milliseconds(setsDone - start)) ms; \(after.commits - before.commits) commits
              observer: \(PropagationBenchmark.field(stats, "reloads") ?? 0) reloads; its view equalled the writer's \
            \(milliseconds(converged - start)) ms after the first set
            """)
    }
}

/// This process as the writer of a suite, and observer processes started
/// after `prepare` ran (and ready: their watches are in place).
struct WriterAndObserver {
    let root: String
    let temporary: Bool
    let defaults: GroupDefaults
    let observers: [RunningProcess]
    var observer: RunningProcess { observers[0] }

    init(_ options: BenchOptions, observers count: Int = 1, observerArguments: [String] = [], prepare: (GroupDefaults) throws -> Void = { _ in })
        throws
    {
        (root, temporary) = try options.makeRoot()
        defaults = try DomainFiles(root: SimulationRoot(path: root), device: SimulationRoot.defaultDevice).defaults(for: options.domain)
        try prepare(defaults)
        var started: [RunningProcess] = []
        for _ in 0..<max(count, 1) {
            started.append(
                try RunningProcess(CommandLine.arguments[0], ["observer", "--root", root, "--domain", options.domain] + observerArguments))
        }
        for observer in started { try observer.waitForLine(timeout: 60) { $0 == "ready" } }
        observers = started
    }

    /// Sets the probe to `index` and returns the time from the set until the
    /// last observer was told (its callback's clock reading, nanoseconds).
    func propagate(_ index: Int) throws -> UInt64 {
        let start = MonotonicClock.now()
        defaults.set(.integer(Int64(index)), forKey: "probe")
        var last: UInt64 = start
        for observer in observers {
            let line = try observer.waitForLine(timeout: 60) { $0.hasPrefix("seen \(index) ") }
            guard let seenAt = UInt64(line.split(separator: " ")[2]) else { throw ValidationError("bad observer line: \(line)") }
            last = max(last, seenAt)
        }
        return last - start
    }

    func removeRoot() {
        for observer in observers { observer.kill() }
        if temporary { try? FileManager.default.removeItem(atPath: root) }
    }
}
