import ArgumentParser
import ChildProcess
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import Histogram
import PropertyList
import SharedFiles
import Synchronization

/// Latency from an app's `set` on one device's iCloud store to the
/// external-change notification in an app on another device, with the cloud
/// in the path: device A's copy (fsync'd) → A's agent → the cloud (fsync'd)
/// → B's agent → B's copy (fsync'd) → B's app. Every hop is a real process
/// on loopback; nothing is added (no latency fault).
struct CloudBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Latency from a write on one device's iCloud store to the notification in another device's app.")

    @Option(help: "Changes measured.") var changes = 500
    @Option(help: "Changes run first and not measured.") var warmup = 50

    func validate() throws {
        try requireCount(changes, "--changes", in: 1...1_000_000)
        try requireCount(warmup, "--warmup", in: 0...1_000_000)
    }
    @Option(help: "Folder holding groupsim (default: beside this executable).") var binaries: String?

    static let store = "com.example.bench.kvs"

    func run() throws {
        let root = (NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-bench-cloud-\(getpid())")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let simulation = SimulationRoot(path: root)
        let folder = binaries ?? (CommandLine.arguments[0] as NSString).deletingLastPathComponent
        let groupsim = folder + "/groupsim"
        for device in ["A", "B"] { try DeviceCloud(root: simulation, device: device).updateSettings { $0.account = "bench" } }

        let server = try RunningProcess(groupsim, ["cloud", "serve", "--root", root])
        defer { server.kill() }
        try server.waitForLine(timeout: 30) { $0.contains("\"listening\"") }
        var agents: [RunningProcess] = []
        defer { for agent in agents { agent.kill() } }
        for device in ["A", "B"] {
            let agent = try RunningProcess(groupsim, ["cloud", "agent", "--root", root, "--device", device])
            try agent.waitForLine(timeout: 30) { $0.contains("\"connected\"") }
            agents.append(agent)
        }
        let observer = try RunningProcess(CommandLine.arguments[0], ["cloud-observer", "--root", root, "--device", "B"])
        try observer.waitForLine(timeout: 30) { $0 == "ready" }
        let writer = try UbiquitousStore(cloud: DeviceCloud(root: simulation, device: "A"), identifier: Self.store)

        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for index in 1...(warmup + changes) {
            let start = MonotonicClock.now()
            try writer.set(.integer(Int64(index)), forKey: "probe")
            let line = try observer.waitForLine(timeout: 30) { $0.hasPrefix("seen \(index) ") }
            guard let seenAt = UInt64(line.split(separator: " ")[2]) else { throw ValidationError("bad observer line: \(line)") }
            if index > warmup { _ = histogram.record(seenAt - start) }
        }
        observer.closeStdin()
        print(
            """
            cloud: \(changes) changes, device A's app → cloud → device B's app (all durable, loopback, no added latency)
              latency set → didChangeExternally in the other device's app (ms):
                p50 \(milliseconds(histogram.valueAtPercentile(50)))  p90 \(milliseconds(histogram.valueAtPercentile(90)))  \
            p99 \(milliseconds(histogram.valueAtPercentile(99)))  max \(milliseconds(histogram.max))  mean \(milliseconds(histogram.mean))
            """)
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
        let box = Mutex<UbiquitousStore?>(nil)
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
