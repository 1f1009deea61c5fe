import ChildProcess
import Foundation
import GroupDefaults
import SharedFiles
import SimulationValues

#if canImport(Glibc)
    import Glibc
#endif

/// The cloud and the devices' agents as background processes of a root, for
/// use by hand: `groupsim cloud start` and `stop`, and an app that needs the
/// cloud starting it. Each holds a `LifetimeLock` while it runs, which is
/// how a second one is refused and how `start`, `stop` and `status` find them.
package struct CloudDaemons: Sendable {
    package let root: SimulationRoot
    /// The `groupsim` executable that runs them.
    package let groupsim: String

    /// `GROUPSIM_CLOUD_AUTOSTART=0`: an app never starts the cloud (the scenario runner and the testing library start and
    /// end their own, and say so to every process they start).
    package static let autostartVariable = SimulationEnvironment.Name.cloudAutostart

    package init(root: SimulationRoot, groupsim: String) {
        self.root = root
        self.groupsim = groupsim
    }

    static func serverLockPath(root: SimulationRoot) -> String { root.path + "/cloud/.server.lock" }
    /// Beside the cloud's, not in the device's folder: erasing the device
    /// must not delete it (a second agent could start), nor be held up by
    /// it (a file held open keeps its deleted folder from being reported
    /// gone, so the agent would never see the device signed in again).
    static func agentLockPath(root: SimulationRoot, device: String) throws -> String {
        _ = try root.devicePath(device)  // the name is checked as a device's
        return root.path + "/cloud/agents/" + device + ".lock"
    }
    static func logFolder(root: SimulationRoot) -> String { root.path + "/cloud/logs" }

    /// Held by `groupsim cloud serve` for its life.
    package static func holdServerLock(root: SimulationRoot) throws -> LifetimeLock {
        let path = serverLockPath(root: root)
        guard let lock = try LifetimeLock.acquire(path, root: root.path) else {
            throw CloudDeviceError.cloudAlreadyServes(
                root: root.path, holder: LifetimeLock.holder(of: path, root: root.path)?.description ?? "a process")
        }
        return lock
    }

    /// Held by `groupsim cloud agent` for its life.
    package static func holdAgentLock(root: SimulationRoot, device: String) throws -> LifetimeLock {
        let path = try agentLockPath(root: root, device: device)
        guard let lock = try LifetimeLock.acquire(path, root: root.path) else {
            throw CloudDeviceError.agentAlreadySyncs(
                device: device, holder: LifetimeLock.holder(of: path, root: root.path)?.description ?? "a process")
        }
        return lock
    }

    package var server: LockHolder? { LifetimeLock.holder(of: Self.serverLockPath(root: root), root: root.path) }

    package func agent(_ device: String) -> LockHolder? {
        guard let path = try? Self.agentLockPath(root: root, device: device) else { return nil }
        return LifetimeLock.holder(of: path, root: root.path)
    }

    /// Every device of the root (by its folder).
    package var devices: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.devicesPath)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Starts the cloud if it is not running, and an agent for each device
    /// that has none; returns what it started, once each holds its lock.
    /// Every device name is checked before anything starts: a name refused
    /// must not leave a cloud running. No cloud is started here when every
    /// device given syncs with a cloud on another host (`server` in its settings).
    /// `listen`: the cloud's `--listen HOST:PORT` (nil: loopback).
    @discardableResult
    package func start(devices: [String], listen: String? = nil) throws -> [String] {
        for device in devices { _ = try Self.agentLockPath(root: root, device: device) }
        var started: [String] = []
        let needsOwnCloud = devices.isEmpty || devices.contains { (try? DeviceCloud(root: root, device: $0).readSettings().server) == nil }
        if server == nil, needsOwnCloud {
            let pid = try spawn(["cloud", "serve", "--root", root.path] + (listen.map { ["--listen", $0] } ?? []), log: "server.log")
            try waitUntilHolding(Self.serverLockPath(root: root), pid: pid, what: "the cloud", log: "server.log")
            started.append("cloud (pid \(pid))")
        }
        for device in devices where agent(device) == nil {
            let log = "agent-\(device).log"
            let pid = try spawn(["cloud", "agent", "--root", root.path, "--device", device], log: log)
            try waitUntilHolding(try Self.agentLockPath(root: root, device: device), pid: pid, what: "\(device)'s agent", log: log)
            started.append("\(device)'s agent (pid \(pid))")
        }
        return started
    }

    /// Ends the cloud and every agent of the root (SIGTERM, then SIGKILL after 5 s); returns what it ended.
    @discardableResult
    package func stop() -> [String] {
        var running: [(String, String, LockHolder)] = []
        if let holder = server { running.append(("cloud", Self.serverLockPath(root: root), holder)) }
        for device in devices {
            if let holder = agent(device), let path = try? Self.agentLockPath(root: root, device: device) {
                running.append(("\(device)'s agent", path, holder))
            }
        }
        // Signalled only while still holding its lock: the pid is then still the daemon's.
        func stillHeld(_ path: String, by holder: LockHolder) -> Bool { LifetimeLock.holder(of: path, root: root.path) == holder }
        for (_, path, holder) in running { DetachedProcess.signal(holder.pid, SIGTERM) { stillHeld(path, by: holder) } }
        let deadline = Date().addingTimeInterval(5)
        for (_, path, holder) in running {
            while stillHeld(path, by: holder), Date() < deadline { usleep(20_000) }
            DetachedProcess.signal(holder.pid, SIGKILL) { stillHeld(path, by: holder) }
        }
        return running.map { "\($0.0) (pid \($0.2.pid))" }
    }

    /// Starts `groupsim ARGUMENTS` in a session of its own (it outlives the
    /// caller and its terminal), input from /dev/null, output appended to a log.
    private func spawn(_ arguments: [String], log: String) throws -> pid_t {
        let folder = Self.logFolder(root: root)
        try root.prepareConfinedDirectory(folder)
        return try DetachedProcess.start(groupsim, arguments, log: folder + "/" + log, appending: true, newSession: true)
    }

    /// Waits (10 s at most) until `pid` holds the lock at `path`; if it exits
    /// first, the error carries the end of its log.
    private func waitUntilHolding(_ path: String, pid: pid_t, what: String, log: String) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if LifetimeLock.holder(of: path, root: root.path)?.pid == pid { return }
            if DetachedProcess.hasExited(pid) {
                let text = (try? String(contentsOfFile: Self.logFolder(root: root) + "/" + log, encoding: .utf8)) ?? ""
                let tail = text.split(separator: "\n").suffix(3).joined(separator: "\n")
                throw CloudDeviceError.didNotStart(what: what, logTail: tail)
            }
            usleep(20_000)
        }
        throw CloudDeviceError.notStartedInTime(what: what, pid: pid, seconds: 10, log: "\(Self.logFolder(root: root))/\(log)")
    }
}
