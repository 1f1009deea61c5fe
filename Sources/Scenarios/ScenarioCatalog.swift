import Foundation
import ScenarioModel
import SpecFormat

/// Finds and checks scenario files: every file is read before any runs,
/// and all errors are reported together.
package enum ScenarioCatalog {
    /// YAML files under the given paths (folders are searched; `apps/` folders hold manifests, not scenarios).
    package static func files(in paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw SpecError(file: path, line: 0, column: 0, message: "no such file or folder")
            }
            if !isFolder.boolValue {
                files.append(path)
                continue
            }
            let enumerator = FileManager.default.enumerator(atPath: path)
            while let relative = enumerator?.nextObject() as? String {
                if relative.split(separator: "/").contains("apps") { continue }
                if relative.hasSuffix(".yaml") || relative.hasSuffix(".yml") { files.append((path as NSString).appendingPathComponent(relative)) }
            }
        }
        return files.sorted()
    }

    /// Parses every file (its executables and manifests looked up on the disk);
    /// returns the scenarios and the errors (by file).
    package static func load(_ files: [String]) -> (scenarios: [Scenario], errors: [Error]) {
        var scenarios: [Scenario] = []
        var errors: [Error] = []
        for file in files {
            do { scenarios.append(try ScenarioParser.load(file, fileSystem: DiskScenarioFiles())) } catch { errors.append(error) }
        }
        var seen: [String: String] = [:]
        for scenario in scenarios {
            if let other = seen[scenario.name] {
                errors.append(
                    SpecError(file: scenario.file, line: 1, column: 1, message: "scenario name '\(scenario.name)' is also used by \(other)"))
            }
            seen[scenario.name] = scenario.file
        }
        return (scenarios, errors)
    }

    /// Whether a scenario matches a `--filter` word: its name, its file (the
    /// name and its folder's, as `cloud/partition-heals.yaml`: not the folders
    /// above, or a checkout under `/work/reboot` would match `reboot` everywhere)
    /// or a tag contains it.
    /// Load errors split into those of files `filter` leaves out (judged by the file's path: a file that does not
    /// load has no name or tags to match) and the rest, which stop a run.
    package static func partition(_ errors: [Error], filter: [String]) -> (skipped: [Error], selected: [Error]) {
        var skipped: [Error] = []
        var selected: [Error] = []
        for error in errors {
            guard let located = error as? SpecError else {
                selected.append(error)
                continue
            }
            let file = located.file.split(separator: "/").suffix(2).joined(separator: "/").lowercased()
            if filter.contains(where: { file.contains($0.lowercased()) }) { selected.append(error) } else { skipped.append(error) }
        }
        return (skipped, selected)
    }

    package static func matches(_ scenario: Scenario, filter: String) -> Bool {
        let word = filter.lowercased()
        let file = scenario.file.split(separator: "/").suffix(2).joined(separator: "/")
        return scenario.name.lowercased().contains(word) || file.lowercased().contains(word)
            || scenario.tags.contains { $0.lowercased().contains(word) }
    }
}
