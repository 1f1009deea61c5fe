import AppInstall
import AppModel
import DeviceState
import Foundation
import GroupDefaults
import PropertyList
import ScenarioModel

/// The faults a scenario injects on the processes and files of a run:
/// signals, corrupt and deleted plists, erased devices.
struct FaultInjector {
    let context: RunContext
    let roster: ProcessRoster

    /// Sends a signal (after `afterAcks` acknowledged synchronizes of its burst); waits for the process to end of one that ends it.
    func kill(_ process: String, signal: Int32, afterAcks: Int?, noting step: Step) throws {
        let target = try roster.driver(process)
        if let afterAcks { try target.waitForAcknowledgedSyncs(afterAcks, timeout: RunnerTimeouts.acknowledgements) }
        context.log.action(process, step)
        target.signal(signal)
        if signal == SIGKILL || signal == SIGTERM || signal == SIGINT {
            guard target.waitForExit(timeout: RunnerTimeouts.exit) != nil else {
                throw ScenarioRunError.check("\(process) did not exit after the signal")
            }
        }
    }

    func signal(_ process: String, _ signal: Int32, noting step: Step) throws {
        context.log.action(process, step)
        try roster.driver(process).signal(signal)
    }

    private func path(of domain: String, device: String?) throws -> String {
        try DomainFiles(root: SimulationRoot(path: context.root), device: device ?? context.scenario.defaultDevice).location(of: domain).path
    }

    func corrupt(_ domain: String, device: String?, content: String, noting step: Step) throws {
        context.log.action("files", step)
        let path = try path(of: domain, device: device)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // Replaced by rename, as a careless tool or a bad sync would.
        try Data(content.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Rewrites the plist in place with one key changed, as an editor does: no lock, no store commit.
    func edit(_ domain: String, device: String?, key: String, value: PlistValue?, noting step: Step) throws {
        context.log.action("files", step)
        let files = DomainFiles(root: SimulationRoot(path: context.root), device: device ?? context.scenario.defaultDevice)
        let path = try files.location(of: domain).path
        var contents = try files.read(domain) ?? [:]
        contents[key] = value
        // A domain never written has no file yet: the editor makes one, as PlistBuddy does.
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw ScenarioRunError.check("edit-file: could not make \(path)")
            }
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: BinaryPropertyList.encode(.dictionary(contents)))
    }

    func deleteFile(_ domain: String, device: String?, noting step: Step) throws {
        context.log.action("files", step)
        try FileManager.default.removeItem(atPath: try path(of: domain, device: device))
    }

    /// An administrator's push: the managed file is replaced atomically, as the CLI does.
    func manage(_ app: String, device: String?, _ change: ManagedChange, noting step: Step) throws {
        context.log.action("files", step)
        try ManagedPreferences.update(root: SimulationRoot(path: context.root), device: device ?? context.scenario.defaultDevice, domain: app) {
            change.apply(to: &$0)
        }
    }

    func erase(_ device: String, noting step: Step) throws {
        context.log.action("files", step)
        try DeviceManager(root: SimulationRoot(path: context.root)).erase(device)
    }

    /// The device restarts, locked until `unlock` (running processes keep what they read).
    func reboot(_ device: String?, protection: ProtectedData.Protection, noting step: Step) throws {
        context.log.action("files", step)
        try DeviceManager(root: SimulationRoot(path: context.root)).reboot(device ?? context.scenario.defaultDevice, protection: protection)
    }

    func unlock(_ device: String?, noting step: Step) throws {
        context.log.action("files", step)
        try DeviceManager(root: SimulationRoot(path: context.root)).unlock(device ?? context.scenario.defaultDevice)
    }

    /// The device's clock jumps forward; reloads deferred past a widget's budget come if a new day began.
    func advanceClock(device: String?, by seconds: Double, noting step: Step) throws {
        context.log.action("files", step)
        let root = SimulationRoot(path: context.root)
        let device = device ?? context.scenario.defaultDevice
        try WidgetReloadBudget(root: root, device: device).advanceClock(by: seconds)
    }
}
