import AppInstall
import AppModel
import AppProtocol
import ExecutableFile
import Foundation
import ScenarioModel
import SharedFiles
import SimulationValues

/// The parser's look-ups on the disk, for the runner and the command line:
/// an `exec:` executable by name (among the running build's products, then
/// on PATH) or beside the scenario file, its symbols
/// read for SimulatedFoundation's control channel, and `app:` manifests.
package struct DiskScenarioFiles: ScenarioFileSystem {
    package init() {}

    package func resolveExecutable(_ name: String, relativeTo scenarioFile: String) -> ExecutableLookup {
        let manager = FileManager.default
        guard name.contains("/") else {
            let folders = Self.buildFolders + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            guard let found = folders.map({ ($0 as NSString).appendingPathComponent(name) }).first(where: Self.runnable) else {
                return .notOnPath(searched: folders)
            }
            return .found(path: found, linkage: Self.linkage(of: found))
        }
        let folder = (scenarioFile as NSString).deletingLastPathComponent
        // Absolute, as the process runs in the scenario's folder, wherever the runner was started.
        var path = name.hasPrefix("/") ? name : (folder as NSString).appendingPathComponent(name)
        if !path.hasPrefix("/") { path = (manager.currentDirectoryPath as NSString).appendingPathComponent(path) }
        path = (path as NSString).standardizingPath
        guard manager.fileExists(atPath: path) else { return .missing(path: path) }
        guard Self.runnable(path) else { return .notRunnable(path: path) }
        return .found(path: path, linkage: Self.linkage(of: path))
    }

    /// Where a bare name is looked for first: the folder of the running executable (`groupsim`, or a test
    /// bundle), which holds the build's products, debug or release alike (`GROUPSIM_BIN_DIR` in its place).
    /// So `exec: [settings-examples]` names the product of the build that runs the scenario.
    static let buildFolders: [String] = {
        if let override = SimulationEnvironment.current.nonEmpty(SimulationEnvironment.Name.binDir) { return [override] }
        return ownExecutablePath().map { [($0 as NSString).deletingLastPathComponent] } ?? []
    }()

    package func loadManifest(at path: String) throws -> AppManifest? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try AppManifest.load(path)
    }

    package func readFile(at path: String) throws -> [UInt8] { try readNamedFile(path) }

    /// A regular file only: its symbols are read next, and a FIFO or device would block or never end.
    static func runnable(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG && FileManager.default.isExecutableFile(atPath: path)
    }

    /// Swift links a package's libraries into the executable, so its own
    /// symbol table defines SimulatedFoundation's control channel when it does.
    package static func linkage(of path: String) -> ExecutableLinkage {
        do {
            let file = try ELFFile(path: path)
            defer { file.close() }
            return try file.definesSymbol(withPrefix: ControlProtocol.channelServerSymbolPrefix) ? .links : .doesNotLink
        } catch {
            return .unreadable("\(error)")
        }
    }
}
