import ChildProcess
import CloudClient
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import ScenarioModel

/// A cloud process of a run (the server, or one device's sync agent): its
/// JSON lines are recorded in the scenario log as they arrive, by
/// `RunningProcess`'s readers, so the timeline shows uploads and downloads.
/// The readers hold only the `CloudLane` they share, never this object: a
/// `CloudProcess` let go (a rig that is never ended) reaches its process's
/// `deinit`, which ends the child.
final class CloudProcess: Sendable {
    let lane: String
    let process: RunningProcess
    private let record: CloudLane

    init(lane: String, executable: String, arguments: [String], log: ScenarioLog) throws {
        self.lane = lane
        let record = CloudLane(lane: lane, log: log)
        self.record = record
        process = try RunningProcess(
            executable, arguments,
            handlers: RunningProcess.Handlers(
                stdout: { line in record.receive(line) },
                stderr: { line in record.receiveError(line) },
                ended: { termination in record.finish(termination) }),
            keepsOutput: false)
        LiveProcesses.shared.add(process)
    }

    static func describe(_ name: String, _ fields: [String: PlistValue]) -> String {
        let keys = (fields["keys"]?.arrayValue ?? []).compactMap(\.stringValue)
        switch name {
        case "upload":
            // A throttled upload says how many local writes it carries (coalesced into one change per key).
            let writes = fields["writes"].map { " (\(PlistJSON.encode($0)) writes)" } ?? ""
            return "↑ upload \(keys.joined(separator: ", "))" + writes
        case "throttled":
            return
                "⏸ throttled: \(fields["changes"].map { PlistJSON.encode($0) } ?? "?") change(s) go up in \(fields["uploadInMs"].map { PlistJSON.encode($0) } ?? "?") ms"
        case "applied":
            return "↓ applied revision \(fields["revision"].map { PlistJSON.encode($0) } ?? "?")"
                + (fields["initial"] == .bool(true) ? " (first download)" : "") + (keys.isEmpty ? "" : ": " + keys.joined(separator: ", "))
        case "listening": return "listening on \(fields["url"]?.stringValue ?? "?")"
        case "cloud-reset":
            return
                "⟲ reset: had revision \(fields["had"].map { PlistJSON.encode($0) } ?? "?"), the cloud \(fields["cloud"].map { PlistJSON.encode($0) } ?? "?")"
                + "; giving back \(fields["givingBack"].map { PlistJSON.encode($0) } ?? "?")"
        case "damaged": return "damaged file set aside: \(fields["path"]?.stringValue ?? "?") (\(fields["reason"]?.stringValue ?? "?"))"
        case "stored":
            return
                "stored \(fields["device"]?.stringValue ?? "?")'s \(keys.joined(separator: ", ")) (revision \(fields["revision"].map { PlistJSON.encode($0) } ?? "?"))"
        default:
            let rest = fields.filter { !["event", "time"].contains($0.key) }
            return rest.isEmpty ? name : "\(name) \(PlistJSON.encode(.dictionary(rest)))"
        }
    }

    /// Waits for the first line naming `event`; throws if the process ends first.
    func waitFor(_ event: String, timeout: Double) throws {
        try record.waitFor(event, timeout: timeout)
    }

    var isRunning: Bool { record.isRunning }
    /// How it ended and its last stderr lines, for the message of a step that needed it running.
    var whyNotRunning: String { record.whyNotRunning }

    func kill() {
        process.signal(SIGKILL)
        record.waitUntilFinished(timeout: 10)
    }
}

/// What a cloud process's readers share with its `CloudProcess`: the lane's
/// log, the events seen, the last lines of stderr and the end.
/// Unchecked Sendable: what was seen and how it ended are reached only through `state`'s lock; the rest is set in `init`.
private final class CloudLane: @unchecked Sendable {
    /// How many of the last stderr lines a failure to start shows.
    static let errorLines = 20

    private struct State {
        var seen = Set<String>()
        var errorTail: [String] = []
        var finished = false
        /// How it ended: "exited with status N" or "killed by signal N", once it has.
        var ending: String?
    }

    let lane: String
    let log: ScenarioLog
    private let state = LockedCondition(State())

    init(lane: String, log: ScenarioLog) {
        self.lane = lane
        self.log = log
    }

    /// A stdout line: an event (a JSON object with "event") or, if not, output.
    func receive(_ line: String) {
        guard let json = try? PlistJSON.parse(line), let fields = try? PlistJSON.decode(json, droppingNulls: true).dictionaryValue,
            let name = fields["event"]?.stringValue
        else {
            log.record(process: lane, kind: .stderr, name: "output", text: line)
            return
        }
        log.record(process: lane, kind: .event, name: name, fields: fields, text: CloudProcess.describe(name, fields))
        state.withLock { _ = $0.seen.insert(name) }
    }

    /// A stderr line, kept (the last few) for the message of a process that ends before it is ready.
    func receiveError(_ line: String) {
        state.withLock {
            $0.errorTail.append(line)
            if $0.errorTail.count > Self.errorLines { $0.errorTail.removeFirst() }
        }
    }

    func finish(_ termination: RunningProcess.Termination?) {
        let status: Int32 =
            switch termination {
            case .exited(let status)?, .signalled(let status)?: status
            case nil: -1
            }
        var killed = false
        if case .signalled? = termination { killed = true }
        log.record(
            process: lane, kind: .exit, name: "exit", fields: ["status": .integer(Int64(status))],
            text: "exited" + (killed ? " (killed)" : ""))
        state.withLock {
            $0.finished = true
            $0.ending = killed ? "killed by signal \(status)" : "exited with status \(status)"
        }
    }

    var isRunning: Bool { state.withLock { !$0.finished } }

    /// Why a process that should be running is not: how it ended and its last
    /// stderr lines (where a crash's or a sanitizer's report is).
    var whyNotRunning: String {
        state.withLock {
            let how = $0.ending ?? "it has not ended"
            return $0.errorTail.isEmpty ? how : how + "; its last stderr lines:\n" + $0.errorTail.joined(separator: "\n")
        }
    }

    func waitFor(_ event: String, timeout: Double) throws {
        let outcome = state.wait(atMost: timeout) { state -> Result<Void, ScenarioRunError>? in
            if state.seen.contains(event) { return .success(()) }
            if state.finished {
                return .failure(ScenarioRunError.check("\(lane) exited before it said \(event): \(state.errorTail.joined(separator: "\n"))"))
            }
            return nil
        } timedOut: { _ in
            .failure(ScenarioRunError.check("\(lane) did not say \(event) within \(timeout) s"))
        }
        try outcome.get()
    }

    func waitUntilFinished(timeout: Double) {
        _ = state.wait(atMost: timeout) { $0.finished }
    }
}

/// The cloud of one scenario run: the server and an agent per device, as
/// real processes started before the first step and ended with the run,
/// and the runner's cloud steps and checks. The testing library starts its
/// simulations' clouds with it too (`startServer`, `startAgent`, `perform`).
/// Unchecked Sendable: the server and the agents are under `lock`; the rest is set in `init`.
package final class CloudRig: @unchecked Sendable {
    let root: SimulationRoot
    let groupsim: String
    let log: ScenarioLog
    private let lock = Locked()
    private var server: CloudProcess?
    private var agents: [String: CloudProcess] = [:]

    package init(root: SimulationRoot, groupsim: String, log: ScenarioLog) {
        self.root = root
        self.groupsim = groupsim
        self.log = log
    }

    static let serverLane = "cloud"
    static func agentLane(_ device: String) -> String { "sync \(device)" }

    func start(devices: [DeviceSpec]) throws {
        for device in devices {
            try DeviceCloud(root: root, device: device.name).updateSettings {
                $0.account = device.account
                $0.clockSkewMilliseconds = device.clockSkewMilliseconds
                $0.uploadIntervalMilliseconds = device.uploadIntervalMilliseconds
                $0.keepsWritesBeforeFirstDownload = device.keepsWritesBeforeFirstDownload
                $0.online = device.online
            }
        }
        try startServer()
        for device in devices { try startAgent(device.name) }
    }

    /// Starts `groupsim cloud serve` and waits until it listens.
    package func startServer() throws {
        let process = try CloudProcess(lane: Self.serverLane, executable: groupsim, arguments: ["cloud", "serve", "--root", root.path], log: log)
        lock.withLock { server = process }
        try process.waitFor("listening", timeout: 20)
    }

    /// Starts `device`'s sync agent (`groupsim cloud agent`) and waits until it is ready.
    package func startAgent(_ device: String) throws {
        let process = try CloudProcess(
            lane: Self.agentLane(device), executable: groupsim, arguments: ["cloud", "agent", "--root", root.path, "--device", device], log: log)
        lock.withLock { agents[device] = process }
        try process.waitFor("ready", timeout: 20)
    }

    package func endAll() {
        let all = lock.withLock { Array(agents.values) + (server.map { [$0] } ?? []) }
        for process in all where process.isRunning { process.kill() }
    }

    var lanes: [String] { [Self.serverLane] + lock.withLock { agents.keys.sorted() }.map(Self.agentLane) }

    /// The pids of the cloud and the agents started so far (for tests).
    var processIDs: [Int32] { lock.withLock { (server.map { [$0] } ?? []) + Array(agents.values) }.map(\.process.pid) }

    // MARK: Steps

    package func perform(_ action: CloudAction) throws {
        switch action {
        case .signIn(let device, let account): try DeviceCloud(root: root, device: device).updateSettings { $0.account = account }
        case .signOut(let device): try DeviceCloud(root: root, device: device).updateSettings { $0.account = nil }
        case .network(let device, let change): try CloudControl(root: root).apply(change, device: device)
        case .killCloud:
            let running = lock.withLock { server }
            guard let running, running.isRunning else { throw ScenarioRunError.check(Self.notRunning("the cloud", running)) }
            running.kill()
        case .restartCloud:
            if let running = lock.withLock({ server }), running.isRunning { running.kill() }
            try startServer()
        case .killAgent(let device):
            let running = lock.withLock { agents[device] }
            guard let running, running.isRunning else { throw ScenarioRunError.check(Self.notRunning("\(device)'s agent", running)) }
            running.kill()
        case .restartAgent(let device):
            if let running = lock.withLock({ agents[device] }), running.isRunning { running.kill() }
            try startAgent(device)
        case .waitForQuiescence(let timeout):
            try waitForQuiescence(timeout: timeout)
        }
    }

    /// "`what` is not running", with how it ended if it ran at all.
    private static func notRunning(_ what: String, _ process: CloudProcess?) -> String {
        what + " is not running" + (process.map { " (\($0.whyNotRunning))" } ?? "")
    }

    /// Polls, every 20 ms, until every signed-in, online device with a running
    /// agent has uploaded all it can, has had its first download, and is at
    /// the cloud's revision of each of its stores.
    private func waitForQuiescence(timeout: Double) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var disagreement = "nothing checked yet"
        while Date() < deadline {
            try LiveProcesses.shared.checkNotInterrupted()
            do {
                guard let found = try firstDisagreement() else { return }
                disagreement = found
            } catch {
                disagreement = "\(error)"
            }
            usleep(20_000)
        }
        throw ScenarioRunError.check("the devices and the cloud did not agree within \(timeout) s: \(disagreement)")
    }

    /// Whether the devices and the cloud agree now (what `wait-cloud` waits for).
    package func isSettled() throws -> Bool { try firstDisagreement() == nil }

    private func firstDisagreement() throws -> String? {
        let running = lock.withLock { server }
        guard let endpoint = try CloudEndpoint.control(root: root), running?.isRunning == true else {
            return Self.notRunning("the cloud", running)
        }
        let devices = lock.withLock { agents.filter { $0.value.isRunning }.keys.sorted() }
        for device in devices {
            let cloud = DeviceCloud(root: root, device: device)
            let settings = try cloud.readSettings()
            guard settings.online, let account = settings.account else { continue }
            for store in settings.stores {
                let copy = try cloud.readStore(store)
                if let found = Self.unsettled(device: device, store: store, account: account, copy: copy) { return found }
                let revision = try cloudStore(store, account: account, at: endpoint)["revision"] ?? .integer(0)
                if let copy, revision != .integer(copy.revision) {
                    return "\(device) is at revision \(copy.revision) of \(store), the cloud at \(PlistJSON.encode(revision))"
                }
            }
        }
        return nil
    }

    /// What keeps a device's copy of a store from being settled on its own
    /// side, or nil. A store the device's apps opened but that has no copy
    /// yet has not had its first download: skipping it would let the next
    /// step run before the device ever heard from the cloud.
    static func unsettled(device: String, store: String, account: String, copy: StoreCopy?) -> String? {
        guard let copy else { return "\(device) has not had its first download of \(store)" }
        if copy.account != account { return "\(device) has not switched \(store) to \(account) yet" }
        if !copy.uploads.isEmpty { return "\(device) still has \(copy.uploads.count) change(s) of \(store) to upload" }
        if !copy.restoring.isEmpty { return "\(device) still has \(copy.restoring.count) key(s) of \(store) to give back to the cloud after a reset" }
        if !copy.initialSyncDone { return "\(device) has not had its first download of \(store)" }
        return nil
    }

    /// The cloud's store as `GET /v1/accounts/<account>/stores/<store>` shows it; empty when the cloud has none.
    private func cloudStore(_ store: String, account: String, at endpoint: CloudEndpoint) throws -> [String: PlistValue] {
        let path = CloudClient.Path.store(store, of: account)
        do {
            return try CloudClient.blocking { try await CloudClient.request(endpoint, path: path) }.dictionaryValue ?? [:]
        } catch CloudClientError.at(_, .answered(status: 404, _)) {
            return [:]
        }
    }

    // MARK: Checks

    func verify(_ check: CloudCheck) throws {
        switch check {
        case .cloudValue(let store, let account, let key, let value, let writtenBy, let aheadMs):
            guard let endpoint = try CloudEndpoint.control(root: root) else { throw ScenarioRunError.check("the cloud has never started") }
            let record = try cloudStore(store, account: account, at: endpoint)["records"]?.dictionaryValue?[key]?.dictionaryValue
            let found = record?["value"]
            let shown =
                showValue(found)
                + (record.map { " (written by \($0["device"]?.stringValue ?? "?") at \($0["time"].map { PlistJSON.encode($0) } ?? "?") ms)" } ?? "")
            if let value, found != value {
                throw ScenarioRunError.check("the cloud's \(key) in \(store) for \(account) should be \(showValue(value)), found \(shown)")
            }
            if let writtenBy, record?["device"]?.stringValue != writtenBy {
                throw ScenarioRunError.check("the cloud's \(key) in \(store) for \(account) should be \(writtenBy)'s write, found \(shown)")
            }
            if let aheadMs {
                let now = DeviceCloudSettings.realTime()
                // The cloud's stamp is whatever a device sent: its distance from now may not fit in 64 bits.
                var ahead: Int64? = nil
                if case .integer(let time)? = record?["time"] {
                    let difference = time.subtractingReportingOverflow(now)
                    ahead = difference.overflow ? (difference.partialValue < 0 ? .max : .min) : difference.partialValue
                }
                guard let ahead, aheadMs >= 0 ? ahead >= Int64(aheadMs) : ahead <= Int64(aheadMs) else {
                    throw ScenarioRunError.check(
                        "the cloud's \(key) in \(store) for \(account) should be stamped \(aheadMs >= 0 ? "at least \(aheadMs) ms ahead of" : "at least \(-aheadMs) ms behind") "
                            + "the real time (\(now) ms), found \(shown)")
                }
            }
        case .copyValue(let device, let store, let key, let value):
            let found = try DeviceCloud(root: root, device: device).readStore(store)?.values[key]
            guard found == value else {
                throw ScenarioRunError.check("\(device)'s copy of \(store): \(key) should be \(showValue(value)), found \(showValue(found))")
            }
        case .uploads(let device, let count):
            guard let endpoint = try CloudEndpoint.control(root: root) else { throw ScenarioRunError.check("the cloud has never started") }
            let status = try CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) }
            let traffic = status.dictionaryValue?["traffic"]?.dictionaryValue?[device]?.dictionaryValue
            let found = traffic?["uploadedChanges"].flatMap { if case .integer(let n) = $0 { Int(n) } else { nil } } ?? 0
            guard found == count else {
                throw ScenarioRunError.check(
                    "\(device)'s agent should have uploaded \(count) change(s) since the cloud started, it uploaded \(found)")
            }
        }
    }
}
