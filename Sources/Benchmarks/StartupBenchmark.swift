import AppProtocol
import ArgumentParser
import ChildProcess
import Foundation
import Histogram
import SharedFiles
import SimulationValues

/// How long a simulated process takes from spawn to its "ready" event
/// (and, for the intent extension, to its exit after performing an intent).
struct StartupBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start-to-ready", abstract: "Time from spawning main-app / widget / intent-extension to ready (or done).")

    @OptionGroup var options: BenchOptions
    @Option(help: "Starts per executable.") var runs = 50

    func validate() throws { try requireCount(runs, "--runs", in: 1...10_000) }

    func run() throws {
        let (root, temporary) = try options.makeRoot()
        defer { if temporary { try? FileManager.default.removeItem(atPath: root) } }
        let folder = (CommandLine.arguments[0] as NSString).deletingLastPathComponent
        let environment = [SimulationEnvironment.Name.root: root]
        print("start-to-ready: \(runs) starts each (ms)")
        for role in ["main-app", "widget"] {
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
            for _ in 0..<runs {
                let start = MonotonicClock.now()
                let process = try RunningProcess(folder + "/" + role, ["--json"], environment: environment)
                try process.waitForLine(timeout: 30) { $0.hasPrefix("{\"event\":\"ready\"") }
                _ = histogram.record(MonotonicClock.now() - start)
                process.closeStdin()
                try process.waitForExit()
            }
            report(role + " (spawn → ready)", histogram)
        }
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for _ in 0..<runs {
            let start = MonotonicClock.now()
            let process = try RunningProcess(folder + "/intent-extension", ["--json", "CountNote"], environment: environment)
            guard try process.waitForExit(timeout: 30) == 0 else { throw ValidationError("intent-extension failed: \(process.stderr)") }
            _ = histogram.record(MonotonicClock.now() - start)
        }
        report("intent-extension (spawn → intent committed → exit)", histogram)
        try userExecutable(root: root, folder: folder)
    }

    /// A user's executable (settings-examples, which links SimulatedFoundation)
    /// alone — spawned with its identity in the environment, to its first line
    /// — and as the scenario runner starts an `exec:` process that links
    /// SimulatedFoundation: to its connection on a control socket, its
    /// `ready` event and the answer to a ping.
    func userExecutable(root: String, folder: String) throws {
        let executable = folder + "/settings-examples"
        let groupsim = folder + "/groupsim"
        let created = try RunningProcess(groupsim, ["device", "create", "iPhone", "--root", root])
        guard try created.waitForExit(timeout: 30) == 0 || created.stderr.contains("exists") else {
            throw ValidationError("groupsim device create failed: \(created.stderr)")
        }
        var alone = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for _ in 0..<runs {
            let start = MonotonicClock.now()
            let process = try RunningProcess(
                executable, ["wait-input"],
                environment: [
                    SimulationEnvironment.Name.root: root, SimulationEnvironment.Name.device: "iPhone",
                    SimulationEnvironment.Name.bundleIdentifier: "com.example.notes",
                ])
            try process.waitForLine(timeout: 30) { $0 == "ready=true" }
            _ = alone.record(MonotonicClock.now() - start)
            process.closeStdin()
            try process.waitForExit()
        }
        report("settings-examples alone (spawn → its first line)", alone)
        var underRunner = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for run in 0..<runs {
            let socket = root + "/bench-\(run).sock"
            let listener = try LineSocketListener(path: socket)
            let start = MonotonicClock.now()
            // As the runner starts an executable that links SimulatedFoundation: directly, its identity,
            // its control socket and the unblocking of its signals in the environment.
            let process = try RunningProcess(
                executable, ["wait-input"],
                environment: [
                    SimulationEnvironment.Name.root: root, SimulationEnvironment.Name.device: "iPhone",
                    SimulationEnvironment.Name.bundleIdentifier: "com.example.notes",
                    ControlProtocol.channelSocketVariable: socket, StartingSignalMask.unblockVariable: "1",
                ])
            let channel = try listener.accept(timeout: 30)
            try channel.waitForLine(timeout: 30) { $0.hasPrefix("{\"event\":\"ready\"") }
            channel.write("{\"id\":1,\"cmd\":\"ping\"}")
            try channel.waitForLine(timeout: 30) { $0.hasPrefix("{\"id\":1,") }
            _ = underRunner.record(MonotonicClock.now() - start)
            process.closeStdin()
            try process.waitForExit()
        }
        report("settings-examples as an exec: process (spawn → channel connected → ready → ping answered)", underRunner)
    }

    func report(_ name: String, _ histogram: Histogram<UInt64>) {
        print(
            "  \(name): p50 \(milliseconds(histogram.valueAtPercentile(50)))  p90 \(milliseconds(histogram.valueAtPercentile(90)))  max \(milliseconds(histogram.max))"
        )
    }
}
