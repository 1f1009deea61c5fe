import Foundation
import ScenarioModel
import Scenarios
import SpecFormat
import Terminal

extension Simulation {
    /// Runs the scenario file at `path` (docs/scenarios.md) in-process, in a
    /// simulation root of its own, with groupsim's executables from
    /// `binaries` (default as for `Simulation`). Returns when it passed;
    /// otherwise throws a `Failure` placed at the failing step's line of
    /// the scenario file (or at the line of a mistake in it), whose message
    /// has what each process saw. The run's root is kept when it fails.
    /// A relative `path` is taken from the current folder (`swift test`
    /// runs in the package's folder).
    /// - Parameters:
    ///   - path: The scenario file (relative: to the current folder).
    ///   - binaries: The folder of groupsim's executables (nil: as for `Simulation`).
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the failing step's line of the scenario file (or at a mistake in it), with what each process saw.
    public static func runScenario(
        _ path: String, binaries: String? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let folder = binaries ?? defaultBinaries()
        try await Blocking.run {
            let scenario: Scenario
            do {
                scenario = try ScenarioParser.load(path, fileSystem: DiskScenarioFiles())
            } catch let mistake as SpecError {
                throw Failure(
                    "scenario file: \(mistake.message)",
                    at: mistake.line > 0
                        ? SourcePlace(file: mistake.file, line: mistake.line, column: mistake.column) : SourcePlace(file: mistake.file, line: 1))
            } catch {
                throw Failure("cannot read the scenario \(path): \(error)", at: place)
            }
            for name in ScenarioRunner.executables where !FileManager.default.isExecutableFile(atPath: folder + "/" + name) {
                throw Failure(
                    "a scenario runs groupsim's executables, and \(name) is not in \(folder): make the test target depend on "
                        + "\(ScenarioRunner.executables.map { ".product(name: \"\($0)\", package: \"groupsim\")" }.joined(separator: ", ")) "
                        + "so that they are built, or set GROUPSIM_BIN_DIR", at: place)
            }
            let result = ScenarioRunner(binaries: folder, keepRoots: true).run(scenario)
            guard let failure = result.failure else {
                try? FileManager.default.removeItem(atPath: result.root)
                return
            }
            let report = TextReport(style: TerminalStyle(enabled: false)).finished(result)
            throw Failure(
                "scenario \(scenario.name) failed at \(failure.step): \(failure.message)\n\(report)\n"
                    + "    the run's simulation root is kept for inspection: \(result.root)",
                at: SourcePlace(file: scenario.file, line: failure.line))
        }
    }
}
