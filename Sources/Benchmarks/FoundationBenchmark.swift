import ArgumentParser
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import SimulatedFoundation

/// Foundation's `UserDefaults` and the simulated one (`SimulatedFoundation`,
/// over `GroupDefaults`) side by side, in this one process, on a suite of
/// the same 100 keys: the in-process cost of each call an app makes.
struct FoundationBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "foundation",
        abstract: "Foundation's UserDefaults and the simulated one, side by side in one process, on a 100-key suite.")

    @OptionGroup var options: BenchOptions
    @Option(help: "Keys in the suite.") var keys = 100
    @Option(help: "Rounds per operation; the median round is reported.") var rounds = 7
    @Option(help: "Calls per round for the in-memory operations.") var calls = 200_000
    @Option(help: "Calls per round for set + synchronize() (each one writes the file).") var syncCalls = 200
    @Option(
        help: ArgumentHelp(
            "Measure only this operation, on only this side (for instruction counts under callgrind: scripts/callgrind.sh).",
            valueName: MeasuredOperation.allCases.map(\.rawValue).joined(separator: "|")))
    var only: MeasuredOperation?
    @Option(help: "With --only: the side measured.") var side: MeasuredSide = .groupsim

    func validate() throws {
        if let only, only.isSimulatedOnly, side == .foundation {
            throw ValidationError("--only \(only.rawValue) measures a part of the simulated side's set: use --side groupsim")
        }
        try requireCount(keys, "--keys", in: 1...100_000)
        try requireCount(rounds, "--rounds", in: 1...1000)
        try requireCount(calls, "--calls", in: 1...100_000_000)
        try requireCount(syncCalls, "--sync-calls", in: 1...1_000_000)
    }

    func run() throws {
        let (root, temporary) = try options.makeRoot()
        defer { if temporary { try? FileManager.default.removeItem(atPath: root) } }
        let sides = try makeSides(root: root)
        if let only {
            let calls = only == .setSync ? syncCalls : calls
            let time = measureOnly(only, calls: calls, sides)
            sides.cleanUp()
            print("foundation --only \(only.rawValue) --side \(side.rawValue): \(calls) calls, \(duration(time)) each (median of \(rounds))")
            return
        }
        let rows = measureAll(sides)
        sides.cleanUp()
        printTable(rows)
    }

    /// The two suites measured, Foundation's and the simulated one, filled alike.
    struct Sides {
        let foundation: Foundation.UserDefaults
        let simulated: SimulatedFoundation.UserDefaults
        let foundationSide: DefaultsUnderTest<Foundation.UserDefaults>
        let simulatedSide: DefaultsUnderTest<SimulatedFoundation.UserDefaults>
        /// How each side opens another suite (the added ones).
        let openFoundation: (String) -> Foundation.UserDefaults?
        let openSimulated: (String) -> SimulatedFoundation.UserDefaults?

        /// The library's set under the simulated side's, without the `didChangeNotification` post the face
        /// adds (the post, corelibs' `NotificationCenter`, is measured on its own: `DefaultsUnderTest.posts`)
        /// and without the face's conversion of the value from `Any`.
        func simulatedSetsWithoutPost(_ calls: Int) -> Int {
            let written = DefaultsUnderTest<SimulatedFoundation.UserDefaults>.writtenValues.map(PlistValue.string)
            let key = DefaultsUnderTest<SimulatedFoundation.UserDefaults>.written
            let store = GroupSim.groupDefaults(of: simulated)
            for index in 0..<calls { store.set(written[index & 1], forKey: key, postingDidChange: false) }
            return calls
        }

        /// Finishes the commits a burst of sets started (between rounds, untimed).
        func settle() {
            foundation.synchronize()
            simulated.synchronize()
        }

        func cleanUp() {
            foundationSide.cleanUp(addedSuitesOpenedBy: openFoundation)
            simulatedSide.cleanUp(addedSuitesOpenedBy: openSimulated)
        }
    }

    /// One operation's line of the table: the median call on each side
    /// (nil: Foundation has no such call).
    struct Row {
        let operation: String
        let goal: String
        let foundation: Double?
        let simulated: Double
    }

    private func makeSides(root: String) throws -> Sides {
        // Foundation keeps the suite in the home folder's .config (read once, at start-up: run with HOME set
        // to keep it elsewhere); cleanUp removes it.
        guard let foundation = Foundation.UserDefaults(suiteName: options.domain) else {
            throw ValidationError("Foundation refused the suite \(options.domain)")
        }
        let process = SimulatedProcess(
            identity: ProcessIdentity(
                root: SimulationRoot(path: root), bundleIdentifier: "com.example.bench",
                appGroups: Set([options.domain] + DefaultsUnderTest<SimulatedFoundation.UserDefaults>.addedSuites)),
            launchArguments: ["-launch-flag", "YES", "-launch-name", "bench", "-launch-count", "3"])
        guard let simulated = GroupSim.defaults(suiteName: options.domain, of: process) else {
            throw ValidationError("the simulation refused the suite \(options.domain)")
        }
        let foundationSide = DefaultsUnderTest(defaults: foundation, suite: options.domain)
        let simulatedSide = DefaultsUnderTest(defaults: simulated, suite: options.domain)
        foundationSide.prepare(keys: keys)
        simulatedSide.prepare(keys: keys)
        try Self.fillSearchList(of: simulated, process: process)
        let openFoundation = { Foundation.UserDefaults(suiteName: $0) }
        let openSimulated = { GroupSim.defaults(suiteName: $0, of: process) }
        foundationSide.addSuites(open: openFoundation)
        simulatedSide.addSuites(open: openSimulated)
        return Sides(
            foundation: foundation, simulated: simulated, foundationSide: foundationSide, simulatedSide: simulatedSide,
            openFoundation: openFoundation, openSimulated: openSimulated)
    }

    /// `--only`: one operation on one side (for callgrind), the median call.
    private func measureOnly(_ only: MeasuredOperation, calls: Int, _ sides: Sides) -> Double {
        let hit = "key-\(keys / 2)"
        let body: ((Int) -> Int)? =
            switch side {
            case .groupsim: sides.simulatedSide.operation(only, hit: hit) ?? sides.simulatedSetsWithoutPost
            case .foundation: sides.foundationSide.operation(only, hit: hit)
            }
        guard let body else { preconditionFailure("validate() refuses --only \(only.rawValue) with --side \(side.rawValue)") }
        return median(rounds: rounds, calls: calls, body, settle: sides.settle)
    }

    /// Every operation, each side in turn.
    private func measureAll(_ sides: Sides) -> [Row] {
        let (foundationSide, simulatedSide) = (sides.foundationSide, sides.simulatedSide)
        var rows: [Row] = []
        /// Each side in turn; `settle` runs after each round, untimed.
        func measure(
            _ operation: String, goal: String, calls: Int,
            _ foundationBody: ((Int) -> Int)?, _ simulatedBody: (Int) -> Int, settle: () -> Void = {}
        ) {
            let foundationTime = foundationBody.map { median(rounds: rounds, calls: calls, $0, settle: settle) }
            let simulatedTime = median(rounds: rounds, calls: calls, simulatedBody, settle: settle)
            rows.append(Row(operation: operation, goal: goal, foundation: foundationTime, simulated: simulatedTime))
        }
        let hit = "key-\(keys / 2)"
        measure(
            "string(forKey:) hit", goal: "≤ 30 ns", calls: calls,
            { foundationSide.readStrings(hit, $0) }, { simulatedSide.readStrings(hit, $0) })
        measure(
            "integer(forKey:) from registration", goal: "≤ 30 ns", calls: calls,
            foundationSide.readRegisteredIntegers, simulatedSide.readRegisteredIntegers)
        measure(
            "object(forKey:) miss", goal: "≤ 30 ns", calls: calls,
            foundationSide.readMisses, simulatedSide.readMisses)
        // The commits a burst of sets started are finished between rounds, untimed.
        measure(
            "set (no sync)", goal: "≤ 0.5 µs", calls: calls / 10,
            { foundationSide.set($0, synchronizing: false) }, { simulatedSide.set($0, synchronizing: false) },
            settle: sides.settle)
        // Two parts of the set above: the library's set under the face (without the face's conversion of the
        // value from `Any`), and corelibs' post of the notification (the same `NotificationCenter` on both
        // sides, each posting for its own instance).
        measure(
            "GroupDefaults.set under the face, without the post", goal: "—", calls: calls / 10,
            nil, sides.simulatedSetsWithoutPost, settle: sides.settle)
        measure(
            "NotificationCenter.default.post(didChangeNotification) alone", goal: "—", calls: calls / 10,
            foundationSide.posts, simulatedSide.posts)
        measure(
            "set + synchronize()", goal: "≤ 0.8 ms", calls: syncCalls,
            { foundationSide.set($0, synchronizing: true) }, { simulatedSide.set($0, synchronizing: true) })
        // A read right after a set: the simulated side rebuilds its snapshot of the search list once per set.
        measure(
            "set, then string(forKey:)", goal: "—", calls: calls / 10,
            { foundationSide.setThenRead(hit, $0) }, { simulatedSide.setThenRead(hit, $0) },
            settle: sides.settle)
        // Called again with nothing changed: the simulated side hands back the view its last call made.
        measure(
            "dictionaryRepresentation()", goal: "≤ 10 µs", calls: calls / 100,
            foundationSide.dictionaryRepresentations, simulatedSide.dictionaryRepresentations)
        // What the view costs to make: after a set, the simulated side converts every key again.
        measure(
            "set, then dictionaryRepresentation()", goal: "—", calls: calls / 100,
            foundationSide.setThenDictionaryRepresentations, simulatedSide.setThenDictionaryRepresentations,
            settle: sides.settle)
        return rows
    }

    private func printTable(_ rows: [Row]) {
        print("foundation: \(keys)-key suite \(options.domain), one process, median of \(rounds) rounds")
        print(
            "search list: launch arguments, the suite, two added suites, NSGlobalDomain, languages, registration (Foundation's side: its suite, the two added suites, registration)"
        )
        print("| operation | Foundation | groupsim | Foundation ÷ groupsim | goal (groupsim) |")
        print("|---|---:|---:|---:|---:|")
        for row in rows {
            let foundation = row.foundation.map(duration) ?? "—"
            let ratio = row.foundation.map { String(format: "%.1f×", $0 / max(row.simulated, 1)) } ?? "—"
            print("| `\(row.operation)` | \(foundation) | \(duration(row.simulated)) | \(ratio) | \(row.goal) |")
        }
    }

    /// What an app's search list holds besides its suite: launch arguments, keys in
    /// NSGlobalDomain and registered defaults (the added suites: `addSuites`).
    /// Only the simulated side: Foundation's argument and global domains are
    /// this process's real ones.
    static func fillSearchList(of defaults: SimulatedFoundation.UserDefaults, process: SimulatedProcess) throws {
        var global: [String: PlistValue] = [:]
        for index in 0..<20 { global["global-\(index)"] = .string("global value \(index)") }
        try GroupSim.groupDefaults(of: defaults).setPersistentDomain(global, forName: DomainName.global)
        defaults.synchronize()
    }

    func median(rounds: Int, calls: Int, _ round: (Int) -> Int, settle: () -> Void) -> Double {
        Self.median(rounds: rounds, calls: calls, round, settle: settle)
    }

    /// The median, over `rounds`, of one call's time in a round of `calls` calls.
    static func median(rounds: Int, calls: Int, _ round: (Int) -> Int, settle: () -> Void) -> Double {
        var times: [Double] = []
        var sink = 0
        for _ in 0..<max(rounds, 1) {
            let start = MonotonicClock.now()
            sink &+= round(calls)
            times.append(Double(MonotonicClock.now() - start) / Double(calls))
            settle()
        }
        // Keeps the reads from being optimised away.
        if sink == .min { print(sink) }
        return times.sorted()[times.count / 2]
    }

    func duration(_ nanoseconds: Double) -> String { Self.duration(nanoseconds) }

    static func duration(_ nanoseconds: Double) -> String {
        if nanoseconds >= 100_000 { return String(format: "%.2f ms", nanoseconds / 1e6) }
        if nanoseconds >= 10_000 { return String(format: "%.1f µs", nanoseconds / 1e3) }
        if nanoseconds >= 1_000 { return String(format: "%.2f µs", nanoseconds / 1e3) }
        return String(format: "%.0f ns", nanoseconds)
    }
}

/// What both `UserDefaults` classes answer; the calls measured are written
/// once, over this, and specialised for each class.
enum MeasuredOperation: String, ExpressibleByArgument, CaseIterable {
    case stringHit = "string-hit"
    case integerRegistered = "integer-registered"
    case miss, set
    case setSync = "set-sync"
    case setThenRead = "set-then-read"
    case dictionary
    case setThenDictionary = "set-then-dictionary"
    /// Two parts of the simulated side's set: the library's set under it, without the post (only that side),
    /// and the post alone.
    case setWithoutPost = "set-without-post"
    case post

    var isSimulatedOnly: Bool { self == .setWithoutPost }
}

enum MeasuredSide: String, ExpressibleByArgument, CaseIterable {
    case groupsim, foundation
}

protocol MeasuredDefaults: AnyObject {
    static var didChangeNotification: Notification.Name { get }
    func addSuite(named suiteName: String)
    func string(forKey defaultName: String) -> String?
    func integer(forKey defaultName: String) -> Int
    func object(forKey defaultName: String) -> Any?
    func set(_ value: Any?, forKey defaultName: String)
    @discardableResult func synchronize() -> Bool
    func dictionaryRepresentation() -> [String: Any]
    func register(defaults registrationDictionary: [String: Any])
    func removePersistentDomain(forName domainName: String)
}

extension Foundation.UserDefaults: MeasuredDefaults {}
extension SimulatedFoundation.UserDefaults: MeasuredDefaults {}

/// The calls measured. Each returns a count that depends on what the calls
/// returned, so none can be optimised away.
struct DefaultsUnderTest<Defaults: MeasuredDefaults> {
    let defaults: Defaults
    let suite: String

    static var registered: String { "registered-integer" }
    static var absent: String { "absent-key" }
    static var written: String { "written-key" }

    /// Two values, so every set changes the key.
    static var writtenValues: [String] { ["value-a-" + String(repeating: "x", count: 16), "value-b-" + String(repeating: "x", count: 16)] }
    let written = Self.writtenValues

    /// Two suites added to the search list, each with keys of its own.
    static var addedSuites: [String] { ["group.com.example.bench.first", "group.com.example.bench.second"] }

    /// `open`: the class's `init?(suiteName:)`, in the benchmark's process.
    func addSuites(open: (String) -> Defaults?) {
        for suite in Self.addedSuites {
            guard let added = open(suite) else { continue }
            for index in 0..<10 { added.set("\(suite) value \(index)", forKey: "\(suite)-\(index)") }
            added.synchronize()
            defaults.addSuite(named: suite)
        }
    }

    /// The calls of one operation, for `--only`; nil for the library's set under the face without its post
    /// (`Sides.simulatedSetsWithoutPost`), which has no counterpart here.
    func operation(_ operation: MeasuredOperation, hit: String) -> ((Int) -> Int)? {
        switch operation {
        case .stringHit: { readStrings(hit, $0) }
        case .integerRegistered: readRegisteredIntegers
        case .miss: readMisses
        case .set: { set($0, synchronizing: false) }
        case .setSync: { set($0, synchronizing: true) }
        case .setThenRead: { setThenRead(hit, $0) }
        case .dictionary: dictionaryRepresentations
        case .setThenDictionary: setThenDictionaryRepresentations
        case .post: posts
        case .setWithoutPost: nil
        }
    }

    func prepare(keys: Int) {
        for index in 0..<keys { defaults.set("value-\(index)-" + String(repeating: "x", count: 16), forKey: "key-\(index)") }
        defaults.register(defaults: [Self.registered: 42])
        defaults.synchronize()
    }

    func readStrings(_ key: String, _ calls: Int) -> Int {
        var count = 0
        for _ in 0..<calls { count &+= defaults.string(forKey: key)?.utf8.count ?? 0 }
        return count
    }

    func readRegisteredIntegers(_ calls: Int) -> Int {
        var sum = 0
        for _ in 0..<calls { sum &+= defaults.integer(forKey: Self.registered) }
        return sum
    }

    func readMisses(_ calls: Int) -> Int {
        var count = 0
        for _ in 0..<calls where defaults.object(forKey: Self.absent) == nil { count += 1 }
        return count
    }

    func set(_ calls: Int, synchronizing: Bool) -> Int {
        for index in 0..<calls {
            defaults.set(written[index & 1], forKey: Self.written)
            if synchronizing { defaults.synchronize() }
        }
        return calls
    }

    /// The `didChangeNotification` post a set makes, alone, built anew each time as a set builds it.
    func posts(_ calls: Int) -> Int {
        for _ in 0..<calls { NotificationCenter.default.post(Notification(name: Defaults.didChangeNotification, object: defaults)) }
        return calls
    }

    func setThenRead(_ key: String, _ calls: Int) -> Int {
        var count = 0
        for index in 0..<calls {
            defaults.set(written[index & 1], forKey: Self.written)
            count &+= defaults.string(forKey: key)?.utf8.count ?? 0
        }
        return count
    }

    func dictionaryRepresentations(_ calls: Int) -> Int {
        var count = 0
        for _ in 0..<calls { count &+= defaults.dictionaryRepresentation().count }
        return count
    }

    func setThenDictionaryRepresentations(_ calls: Int) -> Int {
        var count = 0
        for index in 0..<calls {
            defaults.set(written[index & 1], forKey: Self.written)
            count &+= defaults.dictionaryRepresentation().count
        }
        return count
    }

    /// Removes the suite and, through `open` (as `addSuites`), the added
    /// suites, each synchronized: a removal's commit is asynchronous, and
    /// must be done before the root is.
    func cleanUp(addedSuitesOpenedBy open: ((String) -> Defaults?)? = nil) {
        defaults.removePersistentDomain(forName: suite)
        defaults.synchronize()
        for name in open == nil ? [] : Self.addedSuites {
            guard let added = open?(name) else { continue }
            added.removePersistentDomain(forName: name)
            added.synchronize()
        }
    }
}
