import ArgumentParser
import ChildProcess
import Foundation
import Histogram
import SharedFiles

/// How the costs grow with the work: each curve measured at several sizes in
/// one run, written as Markdown tables and SVG charts into one folder.
struct CurvesBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "curves",
        abstract: "Measure how propagation and the cloud's latency and memory grow with the work; write tables and SVG charts.",
        discussion: """
            Curves: propagation-keys (suite size 10 … 10,000), propagation-observers (1 … 64 observing processes), \
            cloud-devices (2 … 16 devices on one account), cloud-accounts (1 … 100 accounts on one cloud), \
            cloud-keys (1 … 1,000 keys in the store whose one key changes), \
            role-memory (main-app and widget resident memory against keys written), suite-jobs (the scenario suite's \
            wall time against --jobs 1, 2, 4), fuzz-rate (randomized histories' operations per second against their length). \
            Each writes OUTPUT/NAME.svg and its table into OUTPUT/curves.md.
            """)

    enum Curve: String, CaseIterable, ExpressibleByArgument {
        case propagationKeys = "propagation-keys"
        case propagationObservers = "propagation-observers"
        case cloudDevices = "cloud-devices"
        case cloudAccounts = "cloud-accounts"
        case cloudKeys = "cloud-keys"
        case roleMemory = "role-memory"
        case suiteJobs = "suite-jobs"
        case fuzzRate = "fuzz-rate"
    }

    @OptionGroup var options: BenchOptions
    @Option(help: "Folder for curves.md and the SVG charts.") var output = "benchmarks/curves"
    @Option(help: "Changes measured at each point.") var changes = 200
    @Option(help: "Changes run first at each point and not measured.") var warmup = 20
    @Option(help: "Folder holding groupsim (default: beside this executable).") var binaries: String?
    @Option(help: "The scenario folder suite-jobs runs.") var scenarios = "scenarios"
    @Flag(help: "Smaller sizes (a smoke run: every curve's code, in seconds).") var quick = false
    @Argument(help: "Curves to measure (default: all).") var curves: [Curve] = []

    func validate() throws {
        try requireCount(changes, "--changes", in: 1...100_000)
        try requireCount(warmup, "--warmup", in: 0...100_000)
    }

    func run() throws {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        var report = [
            "# Cost curves", "", "`groupsim-bench curves --changes \(changes) --warmup \(warmup)\(quick ? " --quick" : "")`, \(Date())", "",
        ]
        for curve in curves.isEmpty ? Curve.allCases : curves {
            let measured = try measure(curve)
            try measured.svg.write(toFile: output + "/\(curve.rawValue).svg", atomically: true, encoding: .utf8)
            let section = "## \(measured.title)\n\n![\(measured.title)](\(curve.rawValue).svg)\n\n\(measured.markdown)\n"
            print(section)
            report.append(section)
        }
        try report.joined(separator: "\n").write(toFile: output + "/curves.md", atomically: true, encoding: .utf8)
    }

    private func measure(_ curve: Curve) throws -> CostCurve {
        switch curve {
        case .propagationKeys:
            let sizes = quick ? [10, 100] : [10, 100, 1_000, 10_000]
            return try propagationCurve("Propagation against suite size", x: "keys in the suite", sizes: sizes) { (keys: $0, observers: 1) }
        case .propagationObservers:
            let counts = quick ? [1, 2] : [1, 4, 16, 64]
            return try propagationCurve("Propagation against observing processes", x: "observing processes", sizes: counts) {
                (keys: 100, observers: $0)
            }
        case .cloudDevices:
            let counts = quick ? [2, 3] : [2, 4, 8, 16]
            return try cloudCurve("The cloud's trip against devices on one account", x: "devices on the account", sizes: counts) {
                (devices: $0, otherAccounts: 0, otherKeys: 0)
            }
        case .cloudAccounts:
            let counts = quick ? [1, 2] : [1, 10, 100]
            return try cloudCurve("The cloud's trip against accounts on one cloud", x: "accounts on the cloud", sizes: counts) {
                (devices: 2, otherAccounts: $0 - 1, otherKeys: 0)
            }
        case .cloudKeys:
            let counts = quick ? [1, 10] : [1, 10, 100, 1_000]
            return try cloudCurve("The cloud's trip against keys in the store", x: "keys in the store", sizes: counts) {
                (devices: 2, otherAccounts: 0, otherKeys: $0 - 1)
            }
        case .roleMemory: return try RoleMemoryCurve(options: options, sizes: quick ? [1, 100] : [1, 100, 1_000, 10_000]).measure()
        case .suiteJobs: return try suiteCurve(jobs: quick ? [1, 2] : [1, 2, 4])
        case .fuzzRate: return try fuzzCurve(lengths: quick ? [5, 10] : [10, 30, 100])
        }
    }

    private var groupsim: String { (binaries ?? (CommandLine.arguments[0] as NSString).deletingLastPathComponent) + "/groupsim" }

    /// Runs `groupsim ARGUMENTS` to its end; its wall time in seconds, or an error with its output.
    private func timed(_ arguments: [String]) throws -> Double {
        let start = MonotonicClock.now()
        let process = try RunningProcess(groupsim, arguments)
        guard try process.waitForExit(timeout: 3_600) == 0 else {
            throw ValidationError(
                "groupsim \(arguments.joined(separator: " ")) failed: \(process.standardOutput.suffix(2_000))\(process.stderr.suffix(2_000))")
        }
        return Double(MonotonicClock.now() - start) / 1e9
    }

    private func suiteCurve(jobs: [Int]) throws -> CostCurve {
        var curve = CostCurve(
            title: "The scenario suite's wall time against --jobs", xLabel: "jobs", yLabel: "s", series: [.init(name: "wall s", points: [])])
        for count in jobs { curve.series[0].points.append((Double(count), try timed(["run", scenarios, "--jobs", String(count)]))) }
        return curve
    }

    private func fuzzCurve(lengths: [Int]) throws -> CostCurve {
        var curve = CostCurve(
            title: "Randomized histories: operations per second against length", xLabel: "operations per history", yLabel: "operations/s",
            series: [.init(name: "operations/s", points: [])])
        let runs = quick ? 2 : 10
        for length in lengths {
            let seconds = try timed(["fuzz", "--seed", "1", "--runs", String(runs), "--length", String(length), "--out", NSTemporaryDirectory()])
            curve.series[0].points.append((Double(length), Double(runs * length) / seconds))
        }
        return curve
    }

    /// p50 and p99 from a set to the last observer's callback, at each size.
    private func propagationCurve(_ title: String, x: String, sizes: [Int], _ setting: (Int) -> (keys: Int, observers: Int)) throws -> CostCurve {
        var curve = CostCurve(
            title: title, xLabel: x, yLabel: "ms", series: [.init(name: "p50 ms", points: []), .init(name: "p99 ms", points: [])])
        for size in sizes {
            let (keys, observers) = setting(size)
            let pair = try WriterAndObserver(options, observers: observers) { defaults in
                for index in 0..<keys { defaults.set(.string("value-\(index)-" + String(repeating: "x", count: 16)), forKey: "key-\(index)") }
                try defaults.flush()
            }
            defer { pair.removeRoot() }
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
            for index in 1...(warmup + changes) {
                let latency = try pair.propagate(index)
                if index > warmup { _ = histogram.record(latency) }
            }
            record(&curve, x: Double(size), histogram)
        }
        return curve
    }

    /// p50 and p99 from a device's set to the last other device's app, and the cloud's resident memory, at each size.
    private func cloudCurve(
        _ title: String, x: String, sizes: [Int], _ setting: (Int) -> (devices: Int, otherAccounts: Int, otherKeys: Int)
    ) throws -> CostCurve {
        var curve = CostCurve(
            title: title, xLabel: x, yLabel: "ms, MiB",
            series: [.init(name: "p50 ms", points: []), .init(name: "p99 ms", points: []), .init(name: "cloud RSS MiB", points: [])])
        for size in sizes {
            let (devices, otherAccounts, otherKeys) = setting(size)
            let world = try CloudWorld(devices: devices, otherAccounts: otherAccounts, otherKeys: otherKeys, binaries: binaries)
            let histogram = try world.measure(changes: changes, warmup: warmup)
            record(&curve, x: Double(size), histogram)
            if let kib = ResidentMemory.kibibytes(of: world.server.pid) { curve.series[2].points.append((Double(size), Double(kib) / 1024)) }
        }
        return curve
    }

    private func record(_ curve: inout CostCurve, x: Double, _ histogram: Histogram<UInt64>) {
        curve.series[0].points.append((x, Double(histogram.valueAtPercentile(50)) / 1e6))
        curve.series[1].points.append((x, Double(histogram.valueAtPercentile(99)) / 1e6))
    }
}

/// A process's resident memory, from /proc.
enum ResidentMemory {
    static func kibibytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}

/// The resident memory of a main-app process that writes N keys of its
/// suite and of a widget that observes them, after the widget heard the
/// last: idle (1 key) and under bursts of growing size, each in fresh processes.
struct RoleMemoryCurve {
    let options: BenchOptions
    let sizes: [Int]

    func measure() throws -> CostCurve {
        var curve = CostCurve(
            title: "Resident memory of the role processes against keys written", xLabel: "keys written by the app", yLabel: "MiB",
            series: [.init(name: "main-app MiB", points: []), .init(name: "widget MiB", points: [])])
        let folder = (CommandLine.arguments[0] as NSString).deletingLastPathComponent
        for size in sizes {
            let (root, temporary) = try options.makeRoot()
            defer { if temporary { try? FileManager.default.removeItem(atPath: root) } }
            let app = try RunningProcess(folder + "/main-app", ["--json", "--root", root])
            defer { app.kill() }
            let widget = try RunningProcess(folder + "/widget", ["--json", "--root", root])
            defer { widget.kill() }
            for process in [app, widget] { try process.waitForLine(timeout: 30) { $0.hasPrefix("{\"event\":\"ready\"") } }
            for index in 1...size { app.write(#"{"id":\#(index),"cmd":"set","key":"bench-\#(index)","value":\#(index)}"#) }
            try app.waitForLine(timeout: 300) { $0.hasPrefix(#"{"id":\#(size),"#) }
            try widget.waitForLine(timeout: 300) { $0.contains(#""event":"change""#) && $0.contains(#""key":"bench-\#(size)""#) }
            for (series, process) in [app, widget].enumerated() {
                guard let kib = ResidentMemory.kibibytes(of: process.pid) else { throw ValidationError("cannot read /proc/\(process.pid)/status") }
                curve.series[series].points.append((Double(size), Double(kib) / 1024))
            }
        }
        return curve
    }
}
