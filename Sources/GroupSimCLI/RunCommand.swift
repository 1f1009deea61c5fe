import ArgumentParser
import Foundation
import Scenarios
import Terminal

/// `groupsim run`: the scenario suite.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run scenario files against real app, widget and intent-extension processes and check the results.",
        discussion: "Each scenario runs in a fresh simulation root; every process it started is ended, even when it fails or the run is interrupted. Format: docs/scenarios.md.")

    @Argument(help: "Scenario files or folders (default: scenarios/).") var paths: [String] = []
    @Option(help: "Run only scenarios whose name, file or tags contain this text (repeatable).") var filter: [String] = []
    @Option(help: "Run each scenario this many times and report which were flaky.") var `repeat` = 1
    @Option(help: "Write a JUnit XML report here.") var junit: String?
    @Option(help: "Write a JSON report (every event of every run) here.") var json: String?
    @Option(help: "Write a self-contained HTML timeline of the runs here.") var timeline: String?
    @Flag(help: "Only check the files and list the scenarios.") var list = false
    @Flag(help: "Keep each scenario's simulation root for inspection.") var keepRoots = false

    func validate() throws {
        if `repeat` < 1 { throw ValidationError("--repeat needs a positive count") }
    }

    func run() throws {
        // Progress must stream (CI logs, pipes): whole lines, unbuffered.
        let output = LineWriter.standardOutput
        func print(_ line: String) { output.write(line) }
        let style = TerminalStyle.forStandardOutput()
        let files = try ScenarioCatalog.files(in: paths.isEmpty ? ["scenarios"] : paths)
        let (all, errors) = ScenarioCatalog.load(files)
        if !errors.isEmpty {
            for error in errors { FileHandle.standardError.write(Data("\(style.error("error:")) \(error)\n".utf8)) }
            FileHandle.standardError.write(Data("\(errors.count) scenario file(s) have errors; nothing was run.\n".utf8))
            throw ExitCode(2)
        }
        let selected = filter.isEmpty ? all : all.filter { scenario in filter.contains { ScenarioCatalog.matches(scenario, filter: $0) } }
        if list {
            for scenario in selected { print("\(scenario.name)  \(style.dim(scenario.summary))") }
            return
        }
        guard !selected.isEmpty else { throw ValidationError("no scenario matches \(filter.joined(separator: ", "))") }
        let binaries: String
        do { binaries = try ScenarioRunner.defaultBinaries() } catch {
            FileHandle.standardError.write(Data("\(style.error("error:")) \(error)\n".utf8))
            throw ExitCode(2)
        }

        LiveProcesses.shared.endAllOnInterrupt()
        let runner = ScenarioRunner(binaries: binaries, keepRoots: keepRoots)
        let report = TextReport(style: style)
        var results: [ScenarioResult] = []
        print("Running \(selected.count) scenario(s)" + (`repeat` > 1 ? " × \(`repeat`)" : "") + " from \(files.count) file(s)")
        for scenario in selected {
            for run in 1...`repeat` {
                if style.enabled { output.writeRaw(report.started(scenario, run: run, of: `repeat`) + "\r") }
                let result = runner.run(scenario)
                if style.enabled { output.writeRaw("\u{1B}[K") }
                print(report.finished(result))
                results.append(result)
            }
        }
        for (path, text) in [(junit, JUnitReport.render(results)), (json, JSONReport.render(results)), (timeline, TimelineReport.render(results))] {
            guard let path else { continue }
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            print("wrote \(path)")
        }

        let byName = Dictionary(grouping: results, by: \.scenario.name)
        let flaky = byName.filter { $0.value.contains(where: \.passed) && $0.value.contains { !$0.passed } }.keys.sorted()
        let failedScenarios = byName.filter { $0.value.contains { !$0.passed } }.keys.sorted()
        let passed = results.filter(\.passed).count
        print("")
        if !flaky.isEmpty { print(style.warning("flaky (passed and failed across --repeat runs): \(flaky.joined(separator: ", "))")) }
        if !failedScenarios.isEmpty { print(style.error("failed: \(failedScenarios.joined(separator: ", "))")) }
        print("scenarios: \(passed) passed, \(results.count - passed) failed")
        if passed != results.count { throw ExitCode(1) }
    }
}
