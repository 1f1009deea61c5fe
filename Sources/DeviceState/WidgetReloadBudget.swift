import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import SimulationValues

/// WidgetKit's daily reload budget on one device: the app's
/// `WidgetCenter.reloadAllTimelines()` from the background counts against
/// each of its widgets' budget for the simulated day (`DeviceClock`); past
/// it the reload is deferred until the budget refills at the next day.
/// Reloads asked while the app is in the foreground are free.
///
/// Kept in the device's WidgetCenter file, which widgets watch: a key per
/// widget bundle (or `*`) is a reload request, `kind:BUNDLE:KIND` a request
/// for one kind of the bundle's widgets (`reloadTimelines(ofKind:)`),
/// `deferred:BUNDLE` the delivery of a deferred one, and `budget:BUNDLE` the
/// day's counters (one budget per widget bundle, whatever the kind).
package struct WidgetReloadBudget: Sendable {
    /// Reloads a widget gets a day when its manifest says nothing (`WidgetEnvironment.defaultDailyBudget`).
    package static let defaultDailyBudget = WidgetEnvironment.defaultDailyBudget
    package static let allWidgets = "*"

    package let root: SimulationRoot
    package let device: String

    package init(root: SimulationRoot, device: String) {
        self.root = root
        self.device = device
    }

    package var path: String { get throws { try root.devicePath(device) + "/Library/WidgetCenter/timeline-reloads.plist" } }
    package static func budgetKey(_ bundle: String) -> String { "budget:" + bundle }
    package static func deferredKey(_ bundle: String) -> String { "deferred:" + bundle }
    package static func kindKey(_ bundle: String, kind: String) -> String { "kind:" + bundle + ":" + kind }

    /// One widget's counters for a day.
    package struct Counters: Sendable, Equatable {
        package var day: Int
        /// Reloads counted against the budget.
        package var used = 0
        /// Reloads asked past the budget, waiting for the next day.
        package var deferred = 0
        /// Reloads asked from the foreground, which do not count.
        package var free = 0

        init(day: Int) { self.day = day }

        init?(_ value: PlistValue?, day: Int) {
            guard let fields = value?.dictionaryValue else { return nil }
            // Bounded, whatever the file says: a damaged or hand-edited count must not overflow when counted on.
            func number(_ key: String) -> Int { if case .integer(let n)? = fields[key] { Int(min(max(n, 0), 1 << 40)) } else { 0 } }
            self.day = number("day")
            used = number("used")
            deferred = number("deferred")
            free = number("free")
        }

        var plist: PlistValue {
            .dictionary([
                "day": .integer(Int64(day)), "used": .integer(Int64(used)), "deferred": .integer(Int64(deferred)), "free": .integer(Int64(free)),
            ])
        }
    }

    /// What became of one request.
    package enum Outcome: Sendable, Equatable {
        case free
        case counted(Counters)
        case deferred(Counters)
    }

    /// The app asks for its widget's reload. `budget` nil: unlimited (and
    /// `bundle` nil: no widget target, every widget of the device is asked, as before).
    /// `kind`: only the bundle's widgets of that kind (`reloadTimelines(ofKind:)`); nil: all of them.
    @discardableResult
    package func request(widget bundle: String?, kind: String? = nil, budget: Int?, inForeground: Bool) throws -> Outcome {
        try root.prepareConfinedDirectory((try path as NSString).deletingLastPathComponent)
        let today = DeviceClock.day(of: try DeviceClock(root: root, device: device).now())
        var outcome = Outcome.free
        let file = try path
        try sharedFile(file).update { contents in
            // One kind of the bundle's widgets, when named; else every widget (free or unbudgeted) or the bundle's (counted).
            let ofKind = bundle.flatMap { bundle in kind.map { Self.kindKey(bundle, kind: $0) } }
            guard let bundle, let budget else { return Self.bump(ofKind ?? Self.allWidgets, in: &contents) }
            var counters = Self.rollOver(bundle, to: today, in: &contents, file: file)
            if inForeground {
                counters.free += 1
                Self.bump(ofKind ?? Self.allWidgets, in: &contents)
                outcome = .free
            } else if counters.used < budget {
                counters.used += 1
                Self.bump(ofKind ?? bundle, in: &contents)
                outcome = .counted(counters)
            } else {
                counters.deferred += 1
                outcome = .deferred(counters)
            }
            contents[Self.budgetKey(bundle)] = counters.plist
        }
        return outcome
    }

    /// Delivers every reload deferred on a day before the device's day now
    /// (after its clock was advanced); returns the widgets reloaded.
    @discardableResult
    package func deliverDeferred() throws -> [String] {
        let file = try path
        guard FileManager.default.fileExists(atPath: file) else { return [] }
        let today = DeviceClock.day(of: try DeviceClock(root: root, device: device).now())
        var delivered: [String] = []
        try sharedFile(file).update { contents in
            for key in contents.keys.sorted() where key.hasPrefix("budget:") {
                let bundle = String(key.dropFirst("budget:".count))
                let before = Counters(contents[key], day: today)
                let after = Self.rollOver(bundle, to: today, in: &contents, file: file)
                if before?.deferred ?? 0 > 0, after.deferred == 0 { delivered.append(bundle) }
                contents[key] = after.plist
            }
        }
        return delivered
    }

    /// Moves the device's clock forward by `seconds` and delivers the reloads deferred on a day the clock has left:
    /// what `advance-clock`, `groupsim device clock --advance` and GroupSimTesting's `advanceClock` do. Returns the widgets reloaded.
    @discardableResult
    package func advanceClock(by seconds: Double) throws -> [String] {
        try DeviceClock(root: root, device: device).advance(by: seconds)
        return try deliverDeferred()
    }

    /// The file, written with the root's durability (a scenario's root does not fsync), as the app's own domains are.
    private func sharedFile(_ path: String) throws -> SharedPlistFile {
        try SharedPlistFile(path: path, durable: try root.durability().waitsForTheDisk, root: root.path)
    }

    /// Every widget's counters on the device (for `groupsim device widget-budget`).
    package func counters() throws -> [(bundle: String, counters: Counters)] {
        let contents = try SharedPlistFile.read(path: try path, root: root.path) ?? [:]
        return contents.keys.sorted().filter { $0.hasPrefix("budget:") }.compactMap { key in
            Counters(contents[key], day: 0).map { (String(key.dropFirst("budget:".count)), $0) }
        }
    }

    /// A widget's counters for `today`: a new day refills the budget, and a
    /// reload deferred on an earlier day is delivered now, the first of the new day's.
    /// Counters of a day after today (a device's clock only moves forward:
    /// a damaged or hand-edited `file`) would defer every reload until that
    /// day: they start over for today, and the file and the day are said.
    private static func rollOver(_ bundle: String, to today: Int, in contents: inout [String: PlistValue], file: String) -> Counters {
        if let counters = Counters(contents[budgetKey(bundle)], day: today), counters.day > today {
            Diagnostics.report(
                Diagnostic(
                    kind: .reloadFailed,
                    message: "\(budgetKey(bundle)) in '\(file)' counts reloads for \(DeviceClock.dayText(counters.day)), after the device's "
                        + "day (\(DeviceClock.dayText(today))); the counters start over for today",
                    path: file))
            return Counters(day: today)
        }
        guard let counters = Counters(contents[budgetKey(bundle)], day: today), counters.day < today else {
            return Counters(contents[budgetKey(bundle)], day: today) ?? Counters(day: today)
        }
        var fresh = Counters(day: today)
        if counters.deferred > 0 {
            bump(deferredKey(bundle), in: &contents)
            fresh.used = 1
        }
        return fresh
    }

    private static func bump(_ key: String, in contents: inout [String: PlistValue]) {
        if case .integer(let count)? = contents[key] { contents[key] = .integer(count &+ 1) } else { contents[key] = .integer(1) }
    }
}
