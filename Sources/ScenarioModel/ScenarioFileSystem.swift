import AppModel
import SpecFormat

/// What the parser asks of the world beyond the scenario's text: where an
/// `exec:` executable is and whether it links SimulatedFoundation, and the
/// app manifest an `app:` path names. The runner and the command line ask
/// the disk (`DiskScenarioFiles`, in Scenarios); the fuzz target and tests
/// ask `FixedScenarioFiles`, so parsing touches nothing but the text. The
/// parser alone words the errors, so both give the same messages.
package protocol ScenarioFileSystem: Sendable {
    /// The executable `name` (as written after `exec:`) of the scenario file
    /// `scenarioFile`: a name with a '/' is relative to the file's folder, a
    /// bare name is looked up on PATH.
    func resolveExecutable(_ name: String, relativeTo scenarioFile: String) -> ExecutableLookup
    /// The manifest at `path`; nil when no file is there.
    func loadManifest(at path: String) throws -> AppManifest?
    /// The bytes of the scenario file at `path` (`ScenarioParser.load`).
    func readFile(at path: String) throws -> [UInt8]
}

/// What became of looking an `exec:` executable up.
package enum ExecutableLookup: Sendable, Equatable {
    /// A runnable regular file, at this absolute path.
    case found(path: String, linkage: ExecutableLinkage)
    /// A bare name that no folder of PATH (these) has.
    case notOnPath(searched: [String])
    /// Nothing at this absolute path.
    case missing(path: String)
    /// Something at this absolute path that cannot be run: a folder, a device, a file not marked executable.
    case notRunnable(path: String)
}

/// Whether an executable's file shows SimulatedFoundation linked in.
package enum ExecutableLinkage: Sendable, Equatable {
    case links
    case doesNotLink
    /// The file cannot be read as an ELF executable (a script, say); why.
    case unreadable(String)
}

/// A file system fixed in memory: executables by the name a scenario gives
/// them, manifests' YAML by path. Anything else is not there.
package struct FixedScenarioFiles: ScenarioFileSystem {
    package var executables: [String: ExecutableLookup]
    package var manifests: [String: String]
    /// Scenario files' text by path, for `ScenarioParser.load`.
    package var files: [String: String]
    /// What a bare name missing from `executables` was looked for on.
    package var searchPath: [String]

    package init(
        executables: [String: ExecutableLookup] = [:], manifests: [String: String] = [:], files: [String: String] = [:],
        searchPath: [String] = ["/usr/bin"]
    ) {
        self.executables = executables
        self.manifests = manifests
        self.files = files
        self.searchPath = searchPath
    }

    package func resolveExecutable(_ name: String, relativeTo scenarioFile: String) -> ExecutableLookup {
        if let lookup = executables[name] { return lookup }
        return name.contains("/") ? .missing(path: name) : .notOnPath(searched: searchPath)
    }

    package func loadManifest(at path: String) throws -> AppManifest? {
        try manifests[path].map { try AppManifest.parse(SpecNode.parse($0, file: path)) }
    }

    /// A file's text from `files`; any other path is not there.
    package func readFile(at path: String) throws -> [UInt8] {
        guard let text = files[path] else { throw ScenarioFileMissing(path: path) }
        return Array(text.utf8)
    }
}

/// `FixedScenarioFiles` has no file at the path.
package struct ScenarioFileMissing: Error, CustomStringConvertible {
    package let path: String
    package var description: String { "no such file: \(path)" }
}
