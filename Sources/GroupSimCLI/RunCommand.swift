import ArgumentParser
import Foundation
import Guarded
import ScenarioModel
import Scenarios
import Terminal

/// `groupsim run`: the scenario suite.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run scenario files against real app, widget and intent-extension processes and check the results.",
        discussion:
            "Each scenario runs in a fresh simulation root; every process it started is ended, even when it fails or the run is interrupted. Format: docs/scenarios.md."
    )

    @Argument(help: "Scenario files or folders (default: scenarios/).") var paths: [String] = []
    @Option(help: "Run only scenarios whose name, file or tags contain this text (repeatable).") var filter: [String] = []
    @Option(help: "Run each scenario this many times and report which were flaky.") var `repeat` = 1
    @Option(help: "Write a JUnit XML report here.") var junit: String?
    @Option(help: "Instead of running, merge these JUnit reports of `--shard` runs into --junit (repeatable).") var mergeJunit: [String] = []
    @Option(help: "Write a JSON report (every event of every run) here.") var json: String?
    @Option(help: "Write a self-contained HTML timeline of the runs here.") var timeline: String?
    @Option(help: "Run this many scenarios at a time (each has its own root and processes).") var jobs = 1
    @Option(help: "Run only part I of N of the suite, e.g. 2/3: every Nth scenario in name order, to split it across machines.") var shard: String?
    @Flag(help: "Only check the files and list the scenarios.") var list = false
    @Flag(help: "Keep each scenario's simulation root for inspection; each result says where it is.") var keepRoots = false

    func validate() throws {
        if !(1...10_000).contains(`repeat`) { throw ValidationError("--repeat must be from 1 to 10000, found \(`repeat`)") }
        if !(1...64).contains(jobs) { throw ValidationError("--jobs must be from 1 to 64, found \(jobs)") }
        _ = try parsedShard()
    }

    /// `--shard I/N` as (I, N), 1 ≤ I ≤ N.
    func parsedShard() throws -> (index: Int, count: Int)? {
        guard let shard else { return nil }
        let parts = shard.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), (1...1000).contains(count), (1...count).contains(index) else {
            throw ValidationError("--shard takes I/N with 1 ≤ I ≤ N ≤ 1000, e.g. 2/3; found '\(shard)'")
        }
        return (index, count)
    }

    func run() throws {
        if !mergeJunit.isEmpty { return try mergeReports() }
        let style = TerminalStyle.forStandardOutput()
        guard let (selected, fileCount) = try selectScenarios(style: style) else { return }
        let binaries: String
        do { binaries = try ScenarioRunner.defaultBinaries() } catch {
            FileHandle.standardError.write(Data("\(style.error("error:")) \(error)\n".utf8))
            throw ExitCode(2)
        }
        endProcessesOnInterrupt()
        let work = selected.flatMap { scenario in (1...`repeat`).map { (scenario, $0) } }
        say(
            "Running \(selected.count) scenario(s)" + (`repeat` > 1 ? " × \(`repeat`)" : "") + " from \(fileCount) file(s)"
                + (jobs > 1 ? ", \(jobs) at a time" : "") + (shard.map { ", shard \($0)" } ?? ""))
        let started = Date()
        let results = run(work, binaries: binaries, style: style)
        try writeReports(results)
        try summarize(results, of: work.count, since: started, style: style)
    }

    /// Progress must stream (CI logs, pipes): whole lines, unbuffered.
    private func say(_ line: String) { LineWriter.standardOutput.write(line) }

    /// `--merge-junit`: one JUnit report of the shards' reports.
    private func mergeReports() throws {
        guard let junit else { throw ValidationError("--merge-junit needs --junit, the merged report's path") }
        let reports = try mergeJunit.map { path in (path: path, text: try String(contentsOfFile: path, encoding: .utf8)) }
        try JUnitReport.merge(reports).write(toFile: junit, atomically: true, encoding: .utf8)
        say("merged \(mergeJunit.count) report(s) into \(junit)")
    }

    /// The scenarios to run (filtered, this shard's) and how many files they
    /// came from; nil when there is nothing more to do (`--list`, an empty shard).
    private func selectScenarios(style: TerminalStyle) throws -> (scenarios: [Scenario], fileCount: Int)? {
        let files = try ScenarioCatalog.files(in: paths.isEmpty ? ["scenarios"] : paths)
        var (all, errors) = ScenarioCatalog.load(files)
        // A file that does not load (an executable not built, a typo) stops the run only if the filter selects it:
        // by its path, as its name and tags could not be read. The others are said and skipped.
        if !filter.isEmpty {
            let (skipped, selectedErrors) = ScenarioCatalog.partition(errors, filter: filter)
            for error in skipped {
                FileHandle.standardError.write(Data("\(style.dim("skipped (the filter leaves it out):")) \(error)\n".utf8))
            }
            errors = selectedErrors
        }
        if !errors.isEmpty {
            for error in errors { FileHandle.standardError.write(Data("\(style.error("error:")) \(error)\n".utf8)) }
            FileHandle.standardError.write(Data("\(errors.count) scenario file(s) have errors; nothing was run.\n".utf8))
            throw ExitCode(2)
        }
        var selected = filter.isEmpty ? all : all.filter { scenario in filter.contains { ScenarioCatalog.matches(scenario, filter: $0) } }
        if let (index, count) = try parsedShard() {
            // Name order, so every machine of a CI matrix cuts the same suite the same way.
            selected = selected.sorted { $0.name < $1.name }.enumerated().filter { $0.offset % count == index - 1 }.map(\.element)
        }
        if list {
            for scenario in selected { say("\(scenario.name)  \(style.dim(scenario.summary))") }
            return nil
        }
        // A shard of a small suite may have nothing to run: that is not a failure of the matrix.
        if selected.isEmpty, let shard {
            say("shard \(shard) has no scenario to run")
            if let junit { try JUnitReport.render([]).write(toFile: junit, atomically: true, encoding: .utf8) }
            return nil
        }
        guard !selected.isEmpty else { throw ValidationError("no scenario matches \(filter.joined(separator: ", "))") }
        return (selected, files.count)
    }

    /// SIGINT or SIGTERM: every process is ended, the scenarios running fail
    /// as interrupted, no other starts, and the reports are written as usual;
    /// the status is then 130 or 143. Runs that do not end in time are left.
    private func endProcessesOnInterrupt() {
        LiveProcesses.shared.endAllOnInterrupt { signal in
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.windDownLimit) {
                FileHandle.standardError.write(
                    Data("the interrupted runs did not end within \(Int(Self.windDownLimit)) s; exiting without reports\n".utf8))
                Foundation.exit(128 + signal)
            }
        }
        StandardOutput.beforeEndingOnClosedOutput { LiveProcesses.shared.endAll() }
    }

    /// Runs each (scenario, repetition) of `work`, `jobs` at a time, until all ran or the run is interrupted.
    private func run(_ work: [(Scenario, Int)], binaries: String, style: TerminalStyle) -> [ScenarioResult] {
        let output = LineWriter.standardOutput
        let runner = ScenarioRunner(binaries: binaries, keepRoots: keepRoots)
        let report = TextReport(style: style)
        return ParallelRuns.run(work.count, jobs: jobs, while: { LiveProcesses.shared.interruption == nil }) { index in
            let (scenario, run) = work[index]
            // The one-line progress display only makes sense one scenario at a time.
            if style.enabled && jobs == 1 { output.writeRaw(report.started(scenario, run: run, of: `repeat`) + "\r") }
            let result = runner.run(scenario)
            output.exclusive {
                if style.enabled && jobs == 1 { StandardOutput.write("\u{1B}[K") }
                StandardOutput.write(report.finished(result) + "\n")
                // Every other root is removed with its scenario (by the warden, should this process be killed).
                if keepRoots { StandardOutput.write(style.dim("    root kept: \(result.root)") + "\n") }
            }
            return result
        }
    }

    private func writeReports(_ results: [ScenarioResult]) throws {
        for (path, text) in [(junit, JUnitReport.render(results)), (json, JSONReport.render(results)), (timeline, TimelineReport.render(results))] {
            guard let path else { continue }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            say("wrote \(path)")
        }
    }

    /// The closing lines (interruption, flaky, failed, counts) and the exit status.
    private func summarize(_ results: [ScenarioResult], of planned: Int, since started: Date, style: TerminalStyle) throws {
        let byName = Dictionary(grouping: results, by: \.scenario.name)
        let flaky = byName.filter { $0.value.contains(where: \.passed) && $0.value.contains { !$0.passed } }.keys.sorted()
        let failedScenarios = byName.filter { $0.value.contains { !$0.passed } }.keys.sorted()
        let passed = results.filter(\.passed).count
        let interruption = LiveProcesses.shared.interruption
        say("")
        if let interruption {
            say(
                style.error(
                    "interrupted by \(LiveProcesses.describe(interruption)): \(results.count) of \(planned) run(s) started, "
                        + "\(planned - results.count) not run; the runs in progress failed as interrupted"))
        }
        if !flaky.isEmpty { say(style.warning("flaky (passed and failed across --repeat runs): \(flaky.joined(separator: ", "))")) }
        if !failedScenarios.isEmpty { say(style.error("failed: \(failedScenarios.joined(separator: ", "))")) }
        say(
            "scenarios: \(passed) passed, \(results.count - passed) failed"
                + String(format: " in %.1f s", Date().timeIntervalSince(started)) + (jobs > 1 ? " (\(jobs) at a time)" : ""))
        if let interruption { throw ExitCode(128 + interruption) }
        if passed != results.count { throw ExitCode(1) }
    }

    /// How long an interrupted run may take to end its scenarios and write its reports.
    static let windDownLimit: Double = 20
}

/// Runs `count` items on at most `jobs` threads, each taking the next item
/// when it is free, while `proceed` says so; the results of the items run
/// come back in item order.
enum ParallelRuns {
    static func run<T: Sendable>(
        _ count: Int, jobs: Int, while proceed: @escaping @Sendable () -> Bool = { true },
        _ body: @escaping @Sendable (Int) -> T
    ) -> [T] {
        let slots = ResultSlots<T>(count)
        let next = NextIndex()
        // Threads of their own, not the dispatch pool: a run mostly waits on
        // its processes, and the pool would hold the count to the cores.
        let done = DispatchGroup()
        for _ in 0..<min(jobs, max(count, 1)) {
            done.enter()
            Thread {
                while proceed(), let index = next.take(below: count) { slots.set(index, body(index)) }
                done.leave()
            }.start()
        }
        done.wait()
        return slots.all
    }

    private final class NextIndex: Sendable {
        private let value = Locked(0)
        func take(below limit: Int) -> Int? {
            value.withLock { value in
                guard value < limit else { return nil }
                defer { value += 1 }
                return value
            }
        }
    }

    private final class ResultSlots<T: Sendable>: Sendable {
        private let slots: Locked<[T?]>
        init(_ count: Int) { slots = Locked(Array(repeating: nil, count: count)) }
        func set(_ index: Int, _ value: T) { slots.withLock { $0[index] = value } }
        var all: [T] { slots.withLock { $0.compactMap { $0 } } }
    }
}
