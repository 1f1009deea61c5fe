import Foundation
import PropertyList

/// A randomized run: from a seed, a history of operations by the app and the
/// widget on an iPhone and the app on an iPad, each device with its own
/// app-group suite — writes, removals, atomic increments and appends,
/// concurrent writes, the intent extension run once, restarts with launch
/// arguments, registered defaults, kill -9 and suspension, a corrupted
/// file, a device erased — written as an ordinary scenario whose checks
/// are what a model of UserDefaults predicts at the end: every acknowledged
/// write is on disk, each key holds the value committed last, counters equal
/// their increments, lists their appends, and each process's effective value
/// is what its search list says (its launch arguments over the suite). The
/// same seed gives the same history; a failing history is shrunk to the
/// smallest that still fails.
public struct RandomRun: Sendable {
    public let seed: UInt64
    public var operations: [Operation]

    /// One operation of the history. Writes are followed by `synchronize`, so
    /// the commit order is the step order and the model can predict the file.
    public enum Operation: Sendable, Equatable {
        case set(process: String, key: String, value: Int)
        case remove(process: String, key: String)
        case increment(process: String, counter: String, by: Int)
        case append(process: String, value: Int)
        /// The app and the widget write two different keys at the same time.
        case concurrent(appKey: String, appValue: Int, widgetKey: String, widgetValue: Int)
        /// Restarted with `-KEY VALUE` launch arguments (none: an empty list).
        case restart(process: String, arguments: [String: String])
        /// kill -9, then launched again (with no arguments).
        case killAndRelaunch(process: String)
        /// The widget is suspended while the app writes, then resumed.
        case suspendedWhileAppWrites(key: String, value: Int)
        /// `register(defaults:)` in one process: seen there only, below the suite.
        case register(process: String, key: String, value: Int)
        /// The suite's file replaced by bytes that are not a property list;
        /// the app's next write (which follows) moves it aside and starts afresh.
        case corruptThenWrite(key: String, value: Int)
        /// The intent extension run once on a device: CountNote (noteCount + 1) or AddNote (appends to notes).
        case intent(device: String, count: Bool, text: Int)
        /// Every container and preference of a device erased under its running processes.
        case eraseDevice(String)
    }

    static let processes = ["app", "widget", "pad"]
    static let devices = ["iPhone", "iPad"]
    static func device(of process: String) -> String { process == "pad" ? "iPad" : "iPhone" }
    static let keys = ["k0", "k1", "k2", "k3"]
    static let counters = ["c0", "c1"]
    static let list = "l0"

    /// The history a seed gives.
    public static func generate(seed: UInt64, length: Int) -> RandomRun {
        var random = SplitMix64(seed: seed)
        var operations: [Operation] = []
        for _ in 0..<length {
            let process = processes[random.next(below: processes.count)]
            let key = keys[random.next(below: keys.count)]
            let value = random.next(below: 1000)
            switch random.next(below: 100) {
            case 0..<30: operations.append(.set(process: process, key: key, value: value))
            case 30..<40: operations.append(.remove(process: process, key: key))
            case 40..<55: operations.append(.increment(process: process, counter: counters[random.next(below: 2)], by: 1 + random.next(below: 5)))
            case 55..<65: operations.append(.append(process: process, value: value))
            case 65..<77:
                var other = keys[random.next(below: keys.count)]
                if other == key { other = keys[(keys.firstIndex(of: key)! + 1) % keys.count] }
                operations.append(.concurrent(appKey: key, appValue: value, widgetKey: other, widgetValue: random.next(below: 1000)))
            case 77..<85:
                var arguments: [String: String] = [:]
                for _ in 0..<random.next(below: 3) { arguments[keys[random.next(below: keys.count)]] = "arg\(random.next(below: 100))" }
                operations.append(.restart(process: process, arguments: arguments))
            case 85..<88: operations.append(.killAndRelaunch(process: random.next(below: 2) == 0 ? "widget" : "pad"))
            case 88..<90: operations.append(.intent(device: devices[random.next(below: 2)], count: random.next(below: 2) == 0, text: value))
            case 90..<94: operations.append(.suspendedWhileAppWrites(key: key, value: value))
            case 94..<97: operations.append(.register(process: process, key: key, value: value))
            case 97: operations.append(.eraseDevice(devices[random.next(below: 2)]))
            default: operations.append(.corruptThenWrite(key: key, value: value))
            }
        }
        return RandomRun(seed: seed, operations: operations)
    }

    // MARK: The model

    /// What the operations leave: the suite's file, and each process's launch arguments.
    struct Model {
        /// Each device's suite.
        var files: [String: [String: PlistValue]] = ["iPhone": [:], "iPad": [:]]
        var arguments: [String: [String: String]] = [:]
        var registered: [String: [String: PlistValue]] = [:]

        var file: [String: PlistValue] {
            get { files["iPhone"]! }
            set { files["iPhone"] = newValue }
        }

        mutating func increment(_ counter: String, by: Int, on device: String) {
            if case .integer(let now)? = files[device]![counter] { files[device]![counter] = .integer(now + Int64(by)) }
            else { files[device]![counter] = .integer(Int64(by)) }
        }

        mutating func append(_ value: PlistValue, to list: String, on device: String) {
            files[device]![list] = .array((files[device]![list]?.arrayValue ?? []) + [value])
        }

        mutating func apply(_ operation: Operation) {
            switch operation {
            case .set(let process, let key, let value): files[RandomRun.device(of: process)]![key] = .integer(Int64(value))
            case .remove(let process, let key): files[RandomRun.device(of: process)]![key] = nil
            case .increment(let process, let counter, let by): increment(counter, by: by, on: RandomRun.device(of: process))
            case .append(let process, let value): append(.integer(Int64(value)), to: RandomRun.list, on: RandomRun.device(of: process))
            case .intent(let device, let count, let text):
                if count { increment("noteCount", by: 1, on: device) } else { append(.string("note\(text)"), to: "notes", on: device) }
            case .concurrent(let appKey, let appValue, let widgetKey, let widgetValue):
                file[appKey] = .integer(Int64(appValue))
                file[widgetKey] = .integer(Int64(widgetValue))
            case .restart(let process, let given):
                arguments[process] = given
                registered[process] = [:]
            case .killAndRelaunch(let process):
                arguments[process] = [:]
                registered[process] = [:]
            case .suspendedWhileAppWrites(let key, let value): file[key] = .integer(Int64(value))
            case .register(let process, let key, let value): registered[process, default: [:]][key] = .integer(Int64(value))
            case .corruptThenWrite(let key, let value): file = [key: .integer(Int64(value))]
            case .eraseDevice(let device): files[device] = [:]
            }
        }

        /// A process's effective value of a key: its argument, else its device's suite's, else its registered default.
        func effective(_ key: String, in process: String) -> PlistValue? {
            arguments[process]?[key].map { .string($0) } ?? files[RandomRun.device(of: process)]![key] ?? registered[process]?[key]
        }
    }

    // MARK: As a scenario

    /// The history as a scenario file, with the model's checks at the end.
    public var yaml: String {
        var model = Model()
        var lines = [
            "name: random-\(seed)-\(operations.count)",
            "summary: A randomized history (seed \(seed), \(operations.count) operations) of the app and the widget on one suite; the checks are the model's.",
            "tags: [random]",
            "devices: [iPhone, iPad]",
            "processes:",
            "  app: { role: main-app }",
            "  widget: { role: widget }",
            "  pad: { role: main-app, device: iPad }",
            "steps:",
            "  - launch: [app, widget, pad]",
        ]
        for operation in operations {
            model.apply(operation)
            lines += Self.steps(for: operation)
        }
        // Once a process has seen a marker written after everything else on its
        // device (by another process), it has read everything before it.
        let marker = seed % 1_000_000 + 1
        lines += [
            "  - set: { in: app, key: marker, value: \(marker) }",
            "  - synchronize: app",
            "  - wait: { for: change, in: widget, key: marker }",
            "  - defaults: [write, --device, iPad, group.com.example.notes, marker, -int, \"\(marker)\"]",
            "  - wait: { for: change, in: pad, key: marker }",
            "  - expect:",
        ]
        let fileKeys = Self.keys + Self.counters + ["noteCount"]
        for device in Self.devices {
            let file = model.files[device]!
            for key in fileKeys + [Self.list, "notes"] {
                if let value = file[key] {
                    if case .array(let items) = value {
                        lines.append("      - { file: group.com.example.notes, device: \(device), length: { key: \(key), is: \(items.count) } }")
                    } else {
                        lines.append("      - { file: group.com.example.notes, device: \(device), key: \(key), value: \(PlistJSON.encode(value)) }")
                    }
                } else {
                    // The markers made both files, so a key's absence is checkable.
                    lines.append("      - { file: group.com.example.notes, device: \(device), absent: \(key) }")
                }
            }
        }
        for process in Self.processes {
            for key in fileKeys {
                if let value = model.effective(key, in: process) {
                    lines.append("      - { in: \(process), key: \(key), value: \(PlistJSON.encode(value)) }")
                } else {
                    lines.append("      - { in: \(process), key: \(key), absent: true }")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func steps(for operation: Operation) -> [String] {
        switch operation {
        case .set(let process, let key, let value):
            return ["  - set: { in: \(process), key: \(key), value: \(value) }", "  - synchronize: \(process)"]
        case .remove(let process, let key):
            return ["  - remove: { in: \(process), key: \(key) }", "  - synchronize: \(process)"]
        case .increment(let process, let counter, let by):
            return ["  - increment: { in: \(process), key: \(counter), by: \(by) }"]
        case .append(let process, let value):
            return ["  - append: { in: \(process), key: \(list), value: \(value) }"]
        case .concurrent(let appKey, let appValue, let widgetKey, let widgetValue):
            return [
                "  - parallel:",
                "      - set: { in: app, key: \(appKey), value: \(appValue) }",
                "      - set: { in: widget, key: \(widgetKey), value: \(widgetValue) }",
                "  - parallel: [{ synchronize: app }, { synchronize: widget }]",
            ]
        case .restart(let process, let arguments):
            let words = arguments.keys.sorted().flatMap { ["-\($0)", arguments[$0]!] }
            return ["  - restart: { process: \(process), args: [\(words.joined(separator: ", "))] }"]
        case .killAndRelaunch(let process):
            return ["  - kill: \(process)", "  - launch: \(process)"]
        case .suspendedWhileAppWrites(let key, let value):
            return ["  - suspend: widget", "  - set: { in: app, key: \(key), value: \(value) }", "  - synchronize: app", "  - resume: widget"]
        case .register(let process, let key, let value):
            return ["  - register: { in: \(process), defaults: { \(key): \(value) } }"]
        case .corruptThenWrite(let key, let value):
            return ["  - corrupt: { domain: group.com.example.notes }", "  - set: { in: app, key: \(key), value: \(value) }", "  - synchronize: app"]
        case .eraseDevice(let device):
            return ["  - erase-device: \(device)"]
        case .intent(let device, let count, let text):
            return [count ? "  - intent: { name: CountNote, device: \(device) }"
                          : "  - intent: { name: AddNote, device: \(device), params: { text: note\(text) } }"]
        }
    }

    // MARK: Shrinking

    /// The smallest history (by removing operations, larger chunks first)
    /// for which `fails` still holds; `fails` runs it for real.
    public func shrunk(while fails: (RandomRun) -> Bool) -> RandomRun {
        var current = self
        var chunk = max(1, current.operations.count / 2)
        while chunk >= 1 {
            var start = 0
            var removedAny = false
            while start < current.operations.count {
                var candidate = current
                candidate.operations.removeSubrange(start..<min(start + chunk, candidate.operations.count))
                if fails(candidate) {
                    current = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny || chunk == 1 { chunk /= 2 } else { chunk = max(1, chunk / 2) }
        }
        return current
    }
}
