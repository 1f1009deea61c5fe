import ArgumentParser
import Foundation
import Histogram

/// How the costs grow with the work: each curve measured at several sizes in
/// one run, written as Markdown tables and SVG charts into one folder.
struct CurvesBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "curves",
        abstract: "Measure how propagation and the cloud's latency and memory grow with the work; write tables and SVG charts.",
        discussion: """
            Curves: propagation-keys (suite size 10 … 10,000), propagation-observers (1 … 64 observing processes), \
            cloud-devices (2 … 16 devices on one account), cloud-accounts (1 … 100 accounts on one cloud). \
            Each writes OUTPUT/NAME.svg and its table into OUTPUT/curves.md.
            """)

    enum Curve: String, CaseIterable, ExpressibleByArgument {
        case propagationKeys = "propagation-keys"
        case propagationObservers = "propagation-observers"
        case cloudDevices = "cloud-devices"
        case cloudAccounts = "cloud-accounts"
    }

    @OptionGroup var options: BenchOptions
    @Option(help: "Folder for curves.md and the SVG charts.") var output = "benchmarks/curves"
    @Option(help: "Changes measured at each point.") var changes = 200
    @Option(help: "Changes run first at each point and not measured.") var warmup = 20
    @Option(help: "Folder holding groupsim (default: beside this executable).") var binaries: String?
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
                (devices: $0, otherAccounts: 0)
            }
        case .cloudAccounts:
            let counts = quick ? [1, 2] : [1, 10, 100]
            return try cloudCurve("The cloud's trip against accounts on one cloud", x: "accounts on the cloud", sizes: counts) {
                (devices: 2, otherAccounts: $0 - 1)
            }
        }
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
    private func cloudCurve(_ title: String, x: String, sizes: [Int], _ setting: (Int) -> (devices: Int, otherAccounts: Int)) throws -> CostCurve {
        var curve = CostCurve(
            title: title, xLabel: x, yLabel: "ms, MiB",
            series: [.init(name: "p50 ms", points: []), .init(name: "p99 ms", points: []), .init(name: "cloud RSS MiB", points: [])])
        for size in sizes {
            let (devices, otherAccounts) = setting(size)
            let world = try CloudWorld(devices: devices, otherAccounts: otherAccounts, binaries: binaries)
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
