import ArgumentParser
import ChildProcess
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import Guarded
import Histogram
import PropertyList
import SharedFiles

/// Latency from an app's `set` on one device's iCloud store to the
/// external-change notification in an app on another device, with the cloud
/// in the path: device A's copy (durable) → A's agent → the cloud (durable)
/// → B's agent → B's copy (durable) → B's app. Every hop is a real process
/// on loopback; nothing is added (no latency fault).
struct CloudBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Latency from a write on one device's iCloud store to the notification in another device's app.")

    @Option(help: "Changes measured.") var changes = 500
    @Option(help: "Changes run first and not measured.") var warmup = 50
    @Option(help: "Other keys in the store, besides the one changed (at most \(CloudLimits.maximumKeys - 1)).")
    var keys = 0
    @Option(
        help: ArgumentHelp(
            "The devices' copies' commits (the cloud's ledger is always durable): durable, or process as in a scenario's root.",
            valueName: "durable|process"))
    var durability = Durability.durable.rawValue

    func validate() throws {
        guard Durability(rawValue: durability) != nil else {
            throw ValidationError("--durability must be durable or process, found '\(durability)'")
        }
        try requireCount(changes, "--changes", in: 1...1_000_000)
        try requireCount(warmup, "--warmup", in: 0...1_000_000)
        try requireCount(keys, "--keys", in: 0...(CloudLimits.maximumKeys - 1))
    }
    @Option(help: "Folder holding groupsim (default: beside this executable).") var binaries: String?

    @Flag(help: "Leave out the time each hop takes (the processes then say no more than without it).")
    var noPhases = false

    static let store = "com.example.bench.kvs"

    func run() throws {
        let copies = Durability(rawValue: durability) ?? .durable
        let world = try CloudWorld(devices: 2, otherAccounts: 0, otherKeys: keys, copies: copies, binaries: binaries, phases: !noPhases)
        let before = world.writerCommits
        let histogram = try world.measure(changes: changes, warmup: warmup)
        let commits = CommitTimingsReport(before: before, after: world.writerCommits)
        print(
            """
            cloud: \(changes) changes of one key in a store of \(keys + 1), device A's app → cloud → device B's app \
            (copies \(copies == .durable ? "durable" : "process-durable"), the cloud's ledger durable, loopback, no added latency)
              latency set → didChangeExternally in the other device's app (ms):
                p50 \(milliseconds(histogram.valueAtPercentile(50)))  p90 \(milliseconds(histogram.valueAtPercentile(90)))  \
            p99 \(milliseconds(histogram.valueAtPercentile(99)))  max \(milliseconds(histogram.max))  mean \(milliseconds(histogram.mean))
            """)
        if let phases = world.phases { print(phases.table()) }
        print("  device A's copy commits (mean, ms; \(commits.count)): \(commits.line)")
    }
}

/// A cloud on loopback with `devices` devices signed in to one account (the
/// first writes, an app on each other one observes), and `otherAccounts`
/// more accounts, each with one device whose agent has uploaded a few keys
/// and stays connected: what a busy cloud holds while the pair is measured.
/// Every process is real; all end, and the root is removed, when it is let go.
final class CloudWorld {
    let root: String
    let simulation: SimulationRoot
    let server: RunningProcess
    private(set) var agents: [RunningProcess] = []
    private(set) var observers: [RunningProcess] = []
    private let writer: UbiquitousStore
    /// Each hop's time, when asked for (two devices only: the path is then one line).
    private(set) var phases: CloudTripPhases?

    /// `otherKeys`: keys the first device writes to the measured store before
    /// any agent starts (so every copy and the cloud's ledger hold them).
    /// `copies`: the root's durability, which the devices' copies follow (the cloud's ledger is always durable).
    /// `phases`: the cloud and the agents put the clock on their event lines, and each change's hops are timed.
    init(devices: Int, otherAccounts: Int, otherKeys: Int = 0, copies: Durability = .durable, binaries: String?, phases: Bool = false) throws {
        self.phases = phases && devices == 2 ? CloudTripPhases() : nil
        let environment = self.phases == nil ? [:] : [EventClock.variable: "1"]
        root = (NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-bench-cloud-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        simulation = SimulationRoot(path: root)
        try simulation.setDurability(copies)
        let groupsim = (binaries ?? (CommandLine.arguments[0] as NSString).deletingLastPathComponent) + "/groupsim"
        let measured = (0..<devices).map { "D\($0)" }
        let others = (0..<otherAccounts).map { "X\($0)" }
        for device in measured { try DeviceCloud(root: simulation, device: device).updateSettings { $0.account = "bench" } }
        for (index, device) in others.enumerated() {
            try DeviceCloud(root: simulation, device: device).updateSettings { $0.account = "other-\(index)" }
        }
        server = try RunningProcess(groupsim, ["cloud", "serve", "--root", root], environment: environment)
        writer = try UbiquitousStore(cloud: DeviceCloud(root: simulation, device: measured[0]), identifier: CloudBenchmark.store)
        try server.waitForLine(timeout: 30) { $0.contains("\"listening\"") }
        for key in 0..<otherKeys { try writer.set(.string("value of key \(key)"), forKey: "key-\(key)") }
        try writer.flush()
        // The other accounts' devices: a few keys each, uploaded and acknowledged before anything is measured.
        for device in others {
            let store = try UbiquitousStore(cloud: DeviceCloud(root: simulation, device: device), identifier: CloudBenchmark.store)
            for key in 0..<10 { try store.set(.string("value \(key) of \(device)"), forKey: "key-\(key)") }
        }
        for device in measured + others {
            agents.append(try RunningProcess(groupsim, ["cloud", "agent", "--root", root, "--device", device], environment: environment))
        }
        for agent in agents { try agent.waitForLine(timeout: 60) { $0.contains("\"connected\"") } }
        for agent in agents.suffix(others.count) { try agent.waitForLine(timeout: 60) { $0.contains("\"acknowledged\"") } }
        for device in measured.dropFirst() {
            observers.append(try RunningProcess(CommandLine.arguments[0], ["cloud-observer", "--root", root, "--device", device]))
        }
        for observer in observers { try observer.waitForLine(timeout: 60) { $0 == "ready" } }
    }

    deinit {
        for process in observers + agents + [server] { process.kill() }
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The commits of device A's copy made by the writer so far.
    var writerCommits: PersistentDomain.Statistics { writer.commitStatistics }

    /// Latency from the first device's set to the last observing app's notification.
    func measure(changes: Int, warmup: Int) throws -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for index in 1...(warmup + changes) {
            let start = MonotonicClock.now()
            try writer.set(.integer(Int64(index)), forKey: "probe")
            var last = start
            for observer in observers {
                let line = try observer.waitForLine(timeout: 60) { $0.hasPrefix("seen \(index) ") }
                guard let seenAt = UInt64(line.split(separator: " ")[2]) else { throw ValidationError("bad observer line: \(line)") }
                last = max(last, seenAt)
            }
            try phases?.record(set: start, seen: last, writerAgent: agents[0], cloud: server, readerAgent: agents[1])
            if index > warmup { _ = histogram.record(last - start) }
        }
        return histogram
    }
}

/// Device B's app in the cloud benchmark: reports each external change of the probe with its arrival time.
struct CloudObserverProcess: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "cloud-observer", shouldDisplay: false)

    @Option var root: String
    @Option var device: String

    func run() throws {
        let output = LineOutput()
        // Set once the store exists; a change may come before.
        let box = Locked<UbiquitousStore?>(nil)
        let store = try UbiquitousStore(cloud: DeviceCloud(root: SimulationRoot(path: root), device: device), identifier: CloudBenchmark.store) {
            change in
            let now = MonotonicClock.now()
            guard change.keys.contains("probe"), case .integer(let value)? = box.withLock({ $0 })?.object(forKey: "probe") else { return }
            output.line("seen \(value) \(now)")
        }
        box.withLock { $0 = store }
        ChangeWatcher.shared.waitUntilIdle()
        output.line("ready")
        while readLine() != nil {}
        withExtendedLifetime(store) {}
    }

}
