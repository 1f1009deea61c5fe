import AppProtocol
import ArgumentParser
import ChildProcess
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import SimulatedFoundation

/// The control channel of a program that links SimulatedFoundation, in this
/// one process: what `string(forKey:)` and `set` cost with no channel and
/// while one serves (same run), and how long a request takes to be
/// answered, from the driver's write to its reading the response.
struct ControlChannelBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "The control channel: reads and sets with and without it, and request round trips over it.")

    @OptionGroup var options: BenchOptions
    @Option(help: "Keys in the suite.") var keys = 100
    @Option(help: "Rounds per operation; the median round is reported.") var rounds = 7
    @Option(help: "Calls per round for reads (sets: a tenth).") var calls = 200_000
    @Option(help: "Requests timed per kind.") var requests = 5_000

    func run() throws {
        let (root, temporary) = try options.makeRoot()
        defer { if temporary { try? FileManager.default.removeItem(atPath: root) } }
        let process = SimulatedProcess(
            identity: ProcessIdentity(
                root: SimulationRoot(path: root), bundleIdentifier: "com.example.bench", appGroups: [options.domain]))
        guard let defaults = GroupSim.defaults(suiteName: options.domain, of: process) else {
            throw ValidationError("the simulation refused the suite \(options.domain)")
        }
        let side = DefaultsUnderTest(defaults: defaults, suite: options.domain)
        side.prepare(keys: keys)
        let hit = "key-\(keys / 2)"

        func measureCalls() -> (read: Double, set: Double) {
            let read = FoundationBenchmark.median(rounds: rounds, calls: calls, { side.readStrings(hit, $0) }, settle: {})
            let set = FoundationBenchmark.median(
                rounds: rounds, calls: calls / 10, { side.set($0, synchronizing: false) }, settle: { defaults.synchronize() })
            return (read, set)
        }
        let without = measureCalls()

        // A channel serving this process, and a driver that reads everything it sends.
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
            throw ValidationError("socketpair: \(String(cString: strerror(errno)))")
        }
        let channel = try ControlChannel.serve(descriptor: ends[0], process: process)
        let driver = LineConnection(descriptor: ends[1])
        try driver.waitForLine(timeout: 20) { $0.hasPrefix(#"{"event":"ready""#) }
        let with = measureCalls()

        // Deliveries of the measured sets, still on their way, are not requests' time.
        channel.waitUntilSent(timeout: 20)
        let gets = try roundTrips(.get(key: hit), suite: options.domain, over: driver)
        let pings = try roundTrips(.ping, suite: nil, over: driver)
        let sets = try roundTrips(.set(key: "written-key", value: .string("value")), suite: options.domain, over: driver)
        driver.close()
        _ = channel.waitUntilEnded(timeout: 20)
        side.cleanUp()

        print("control: \(keys)-key suite \(options.domain), one process, median of \(rounds) rounds; \(channel.eventsDropped) events dropped")
        printTables(without: without, with: with, requests: [("`get`", gets), ("`ping`", pings), ("`set`", sets)])
    }
    func validate() throws {
        guard requests >= 1 else { throw ValidationError("--requests must be at least 1, found \(requests)") }
    }

    /// `requests` round trips of `request`, each from the driver's write to its reading the answer; sorted, in nanoseconds.
    private func roundTrips(_ request: AppRequest, suite: String?, over driver: LineConnection) throws -> [Double] {
        var times: [Double] = []
        times.reserveCapacity(requests)
        for id in 0..<requests {
            let line = ControlProtocol.requestLine(id: id, request, suite: suite)
            let start = MonotonicClock.now()
            driver.write(line)
            try driver.waitForLine(timeout: 20) { $0.hasPrefix("{\"id\":\(id),") }
            times.append(Double(MonotonicClock.now() - start))
        }
        return times.sorted()
    }

    private func printTables(without: (read: Double, set: Double), with: (read: Double, set: Double), requests timed: [(String, [Double])]) {
        func percentile(_ sorted: [Double], _ fraction: Double) -> String {
            sorted.isEmpty ? "-" : FoundationBenchmark.duration(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))])
        }
        print("| call | no channel | channel serving |")
        print("|---|---:|---:|")
        print("| `string(forKey:)` hit | \(FoundationBenchmark.duration(without.read)) | \(FoundationBenchmark.duration(with.read)) |")
        print("| `set` (no sync) | \(FoundationBenchmark.duration(without.set)) | \(FoundationBenchmark.duration(with.set)) |")
        print("")
        print("| request (round trip, \(requests) each) | p50 | p99 | max |")
        print("|---|---:|---:|---:|")
        for (name, times) in timed {
            print("| \(name) | \(percentile(times, 0.5)) | \(percentile(times, 0.99)) | \(FoundationBenchmark.duration(times.last ?? 0)) |")
        }
    }
}
