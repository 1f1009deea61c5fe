import AppModel
import Foundation
import PropertyList
import ScenarioModel

/// What a randomized history leaves, as UserDefaults and iCloud promise it,
/// and the history written as scenario steps. Each operation is applied to
/// the model and turned into its steps in one place, so the two never
/// disagree about what an operation did (a `toggle…` depends on the state;
/// an operation that means nothing in the state, say a network fault while
/// the cloud is down, is left out of both).
struct RandomWorld {
    // MARK: The defaults side

    /// Each device's app-group suite.
    var files: [String: [String: PlistValue]] = ["iPhone": [:], "iPad": [:]]
    /// Each device's added suites (they are never written during the history).
    var addedSuiteFiles: [String: [String: [String: PlistValue]]]
    var arguments: [String: [String: String]] = [:]
    var registered: [String: [String: PlistValue]] = [:]
    /// Each process's added suites, the one added last first (it is searched first).
    var added: [String: [String]] = [:]

    // MARK: The iCloud side

    /// One write to the store as the cloud orders it. The two devices' clocks
    /// are whole hours apart, so writes of different devices are ordered by
    /// their clocks; one device's writes by the order it made them.
    struct CloudWrite {
        var clockHours: Int
        var index: Int
        var device: String
        var value: PlistValue?

        func wins(over other: CloudWrite) -> Bool { (clockHours, index) > (other.clockHours, other.index) }
    }

    let clockHours: [String: Int]
    /// The write of each key that wins.
    var winners: [String: CloudWrite] = [:]
    /// The keys each device's app has written since the device was last
    /// erased. A removal is only made of such a key: removing a key the
    /// device has never seen is no change at all, and whether it has seen
    /// another device's write by then is a matter of timing.
    var writtenBy: [String: Set<String>] = [:]
    var online: Set<String> = Set(RandomRun.devices)
    var partitioned: Set<String> = []
    var agentRunning: Set<String> = Set(RandomRun.devices)
    var cloudRunning = true
    /// The operation being applied (its place in the history orders one device's writes).
    var index = 0

    init(history: RandomRun) {
        addedSuiteFiles = history.addedSuiteContents
        clockHours = ["iPhone": 0, "iPad": history.padClockSkewHours]
    }

    // MARK: Reading the model

    var file: [String: PlistValue] {
        get { files["iPhone"]! }
        set { files["iPhone"] = newValue }
    }

    /// A process's effective value of a key and the domain it comes from: its
    /// argument, else its device's suite, else its added suites (the one added
    /// last first), else its registered default.
    func effective(_ key: String, in process: String) -> (value: PlistValue, domain: String)? {
        let device = RandomRun.device(of: process)
        if let argument = arguments[process]?[key] { return (.string(argument), "NSArgumentDomain") }
        if let value = files[device]![key] { return (value, RandomRun.suite) }
        for suite in added[process] ?? [] {
            if let value = addedSuiteFiles[device]?[suite]?[key] { return (value, suite) }
        }
        if let value = registered[process]?[key] { return (value, "NSRegistrationDomain") }
        return nil
    }

    // MARK: Changing the model

    mutating func increment(_ counter: String, by: Int, on device: String) {
        if case .integer(let now)? = files[device]![counter] { files[device]![counter] = .integer(now + Int64(by)) }
        else { files[device]![counter] = .integer(Int64(by)) }
    }

    mutating func append(_ value: PlistValue, to list: String, on device: String) {
        files[device]![list] = .array((files[device]![list]?.arrayValue ?? []) + [value])
    }

    /// A process started afresh: no arguments (unless given), nothing registered or added.
    mutating func started(_ process: String, arguments given: [String: String] = [:]) {
        arguments[process] = given
        registered[process] = [:]
        added[process] = []
    }

    mutating func cloudWrite(_ value: PlistValue?, key: String, by process: String) {
        let device = RandomRun.device(of: process)
        let write = CloudWrite(clockHours: clockHours[device]!, index: index, device: device, value: value)
        if winners[key].map({ write.wins(over: $0) }) ?? true { winners[key] = write }
        writtenBy[device, default: []].insert(key)
    }

    /// Applies one operation; returns its steps (none if it means nothing now).
    mutating func perform(_ operation: RandomRun.Operation) -> [String] {
        defer { index += 1 }
        switch operation {
        case .set(let process, let key, let value):
            files[RandomRun.device(of: process)]![key] = .integer(Int64(value))
            return ["  - set: { in: \(process), key: \(key), value: \(value) }", "  - synchronize: \(process)"]
        case .remove(let process, let key):
            files[RandomRun.device(of: process)]![key] = nil
            return ["  - remove: { in: \(process), key: \(key) }", "  - synchronize: \(process)"]
        case .increment(let process, let counter, let by):
            increment(counter, by: by, on: RandomRun.device(of: process))
            return ["  - increment: { in: \(process), key: \(counter), by: \(by) }"]
        case .append(let process, let value):
            append(.integer(Int64(value)), to: RandomRun.list, on: RandomRun.device(of: process))
            return ["  - append: { in: \(process), key: \(RandomRun.list), value: \(value) }"]
        case .intent(let device, let count, let text):
            if count { increment("noteCount", by: 1, on: device) } else { append(.string("note\(text)"), to: "notes", on: device) }
            return [count ? "  - intent: { name: CountNote, device: \(device) }"
                          : "  - intent: { name: AddNote, device: \(device), params: { text: note\(text) } }"]
        case .concurrent(let appKey, let appValue, let widgetKey, let widgetValue):
            file[appKey] = .integer(Int64(appValue))
            file[widgetKey] = .integer(Int64(widgetValue))
            return [
                "  - parallel:",
                "      - set: { in: app, key: \(appKey), value: \(appValue) }",
                "      - set: { in: widget, key: \(widgetKey), value: \(widgetValue) }",
                "  - parallel: [{ synchronize: app }, { synchronize: widget }]",
            ]
        case .restart(let process, let given):
            started(process, arguments: given)
            let words = given.keys.sorted().flatMap { ["-\($0)", given[$0]!] }
            return ["  - restart: { process: \(process), args: [\(words.joined(separator: ", "))] }"]
        case .killAndRelaunch(let process):
            started(process)
            return ["  - kill: \(process)", "  - launch: \(process)"]
        case .suspendedWhileAppWrites(let key, let value):
            file[key] = .integer(Int64(value))
            return ["  - suspend: widget", "  - set: { in: app, key: \(key), value: \(value) }", "  - synchronize: app", "  - resume: widget"]
        case .register(let process, let key, let value):
            registered[process, default: [:]][key] = .integer(Int64(value))
            return ["  - register: { in: \(process), defaults: { \(key): \(value) } }"]
        case .corruptThenWrite(let key, let value):
            file = [key: .integer(Int64(value))]
            return ["  - corrupt: { domain: \(RandomRun.suite) }", "  - set: { in: app, key: \(key), value: \(value) }", "  - synchronize: app"]
        case .toggleSuite(let process, let suite):
            if let place = added[process, default: []].firstIndex(of: suite) {
                added[process]!.remove(at: place)
                return ["  - remove-suite: { in: \(process), name: \(suite) }"]
            }
            added[process, default: []].insert(suite, at: 0)
            return ["  - add-suite: { in: \(process), name: \(suite) }"]
        case .eraseDevice(let device):
            // What the device had not uploaded would be lost, by a timing no
            // model can know: everything is brought up and in agreement first.
            var steps = settle()
            files[device] = [:]
            addedSuiteFiles[device] = [:]
            writtenBy[device] = []
            let app = RandomRun.cloudApp(on: device)
            started(app)
            steps += [
                "  - erase-device: \(device)",
                "  - sign-in: { device: \(device), account: alice }",
            ]
            // The erase took the device's clock setting with it; set it again,
            // so the two devices' clocks stay hours apart.
            if clockHours[device] != 0 { steps.append("  - clock-skew: { device: \(device), ms: \(clockHours[device]! * 3_600_000) }") }
            steps.append("  - restart: { process: \(app), args: [] }")
            return steps
        case .kvsSet(let process, let key, let value):
            cloudWrite(.integer(Int64(value)), key: key, by: process)
            return ["  - kvs-set: { in: \(process), key: \(key), value: \(value) }", "  - synchronize: \(process)"]
        case .kvsRemove(let process, let key):
            guard writtenBy[RandomRun.device(of: process)]?.contains(key) == true else { return [] }
            cloudWrite(nil, key: key, by: process)
            return ["  - kvs-remove: { in: \(process), key: \(key) }", "  - synchronize: \(process)"]
        case .kvsConcurrent(let key, let appValue, let padValue):
            cloudWrite(.integer(Int64(appValue)), key: key, by: "app")
            cloudWrite(.integer(Int64(padValue)), key: key, by: "pad")
            return [
                "  - parallel:",
                "      - kvs-set: { in: app, key: \(key), value: \(appValue) }",
                "      - kvs-set: { in: pad, key: \(key), value: \(padValue) }",
                "  - parallel: [{ synchronize: app }, { synchronize: pad }]",
            ]
        case .toggleOnline(let device):
            if online.remove(device) != nil { return ["  - offline: \(device)"] }
            online.insert(device)
            return ["  - online: \(device)"]
        case .togglePartition(let device):
            guard cloudRunning else { return [] }
            if partitioned.remove(device) != nil { return ["  - network: { device: \(device), heal: true }"] }
            partitioned.insert(device)
            return ["  - network: { device: \(device), partition: true }"]
        case .pushFault(let device, let duplicate, let count):
            guard cloudRunning else { return [] }
            return ["  - network: { device: \(device), \(duplicate ? "duplicate-pushes" : "drop-pushes"): \(count) }"]
        case .toggleAgent(let device):
            if agentRunning.remove(device) != nil { return ["  - kill-agent: \(device)"] }
            agentRunning.insert(device)
            return ["  - restart-agent: \(device)"]
        case .toggleCloud:
            if cloudRunning {
                cloudRunning = false
                return ["  - kill-cloud:"]
            }
            // The cloud keeps its faults in memory: a restarted one has none.
            cloudRunning = true
            partitioned = []
            return ["  - restart-cloud:"]
        case .quiesce:
            return settle()
        }
    }

    /// Ends every fault, then waits until the devices and the cloud agree,
    /// and checks that they agree on what the model says.
    mutating func settle() -> [String] {
        var steps: [String] = []
        if cloudRunning {
            steps += partitioned.sorted().map { "  - network: { device: \($0), heal: true }" }
        } else {
            steps.append("  - restart-cloud:")
        }
        cloudRunning = true
        partitioned = []
        for device in RandomRun.devices.filter({ !online.contains($0) }) { steps.append("  - online: \(device)") }
        for device in RandomRun.devices.filter({ !agentRunning.contains($0) }) { steps.append("  - restart-agent: \(device)") }
        online = Set(RandomRun.devices)
        agentRunning = Set(RandomRun.devices)
        steps.append("  - wait-cloud:")
        steps.append("  - expect:")
        for key in RandomRun.kvsKeys {
            let winner = winners[key]
            if let value = winner?.value, let device = winner?.device {
                steps.append("      - { cloud: \(RandomRun.store), account: alice, key: \(key), value: \(PlistJSON.encode(value)), by: \(device) }")
            } else {
                steps.append("      - { cloud: \(RandomRun.store), account: alice, key: \(key), absent: true }")
            }
            for device in RandomRun.devices {
                let expected = winner?.value.map { "value: \(PlistJSON.encode($0))" } ?? "absent: true"
                steps.append("      - { copy: \(RandomRun.store), device: \(device), key: \(key), \(expected) }")
            }
        }
        return steps
    }
}

extension RandomRun {
    /// The app as the example manifest makes it, entitled to the added suites too.
    static var manifest: String {
        AppManifest.exampleYAML
            .replacingOccurrences(of: "app-groups: [\(suite)]", with: "app-groups: [\(([suite] + addedSuites).joined(separator: ", "))]")
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { "  " + $0 }
            .joined(separator: "\n")
    }

    // MARK: As a scenario

    /// The history as a scenario file, with the model's checks at the end.
    public var yaml: String {
        var world = RandomWorld(history: self)
        var lines = [
            "name: random-\(seed)-\(operations.count)",
            "summary: A randomized history (seed \(seed), \(operations.count) operations) of the app and the widget on an iPhone and the app on an iPad, "
                + "with their suites and their iCloud store; the checks are the model's.",
            "tags: [random]",
            "app:",
            Self.manifest,
            "devices:",
            "  - iPhone: { account: alice }",
            "  - iPad: { account: alice, clock-skew-ms: \(padClockSkewHours * 3_600_000) }",
            "processes:",
            "  app: { role: main-app }",
            "  widget: { role: widget }",
            "  pad: { role: main-app, device: iPad }",
            "steps:",
        ]
        // The added suites' contents, written before anyone reads them.
        for device in Self.devices {
            for suite in Self.addedSuites {
                guard let values = world.addedSuiteFiles[device]?[suite], !values.isEmpty else { continue }
                let text = values.keys.sorted().map { "\($0) = \(values[$0]!.stringValue ?? "");" }.joined(separator: " ")
                lines.append("  - defaults: [write, --device, \(device), \(suite), \"{ \(text) }\"]")
            }
        }
        lines.append("  - launch: [app, widget, pad]")
        for operation in operations { lines += world.perform(operation) }
        lines += world.settle()
        // Once a process has seen a marker written after everything else on its
        // device (by another process), it has read everything before it.
        let marker = seed % 1_000_000 + 1
        lines += [
            "  - set: { in: app, key: marker, value: \(marker) }",
            "  - synchronize: app",
            "  - wait: { for: change, in: widget, key: marker }",
            "  - defaults: [write, --device, iPad, \(Self.suite), marker, -int, \"\(marker)\"]",
            "  - wait: { for: change, in: pad, key: marker }",
        ]
        // The same for each added suite a process reads, and for each
        // device's iCloud store: a marker from the other device.
        for device in Self.devices {
            for suite in Self.addedSuites {
                let readers = Self.processes.filter { Self.device(of: $0) == device && world.added[$0]?.contains(suite) == true }
                guard !readers.isEmpty else { continue }
                let suiteMarker = "marker-\(suite.split(separator: ".").last!)"
                lines.append("  - defaults: [write, --device, \(device), \(suite), \(suiteMarker), -int, \"\(marker)\"]")
                lines += readers.map { "  - wait: { for: change, in: \($0), key: \(suiteMarker) }" }
            }
        }
        lines += [
            "  - kvs-set: { in: app, key: marker-iPhone, value: \(marker) }",
            "  - synchronize: app",
            "  - wait: { for: cloud-change, in: pad, reason: server-change, keys: [marker-iPhone] }",
            "  - kvs-set: { in: pad, key: marker-iPad, value: \(marker) }",
            "  - synchronize: pad",
            "  - wait: { for: cloud-change, in: app, reason: server-change, keys: [marker-iPad] }",
            "  - expect:",
        ]
        let fileKeys = Self.keys + Self.counters + ["noteCount"]
        for device in Self.devices {
            let file = world.files[device]!
            for key in fileKeys + [Self.list, "notes"] {
                if let value = file[key] {
                    if case .array(let items) = value {
                        lines.append("      - { file: \(Self.suite), device: \(device), length: { key: \(key), is: \(items.count) } }")
                    } else {
                        lines.append("      - { file: \(Self.suite), device: \(device), key: \(key), value: \(PlistJSON.encode(value)) }")
                    }
                } else {
                    // The markers made both files, so a key's absence is checkable.
                    lines.append("      - { file: \(Self.suite), device: \(device), absent: \(key) }")
                }
            }
        }
        for process in Self.processes {
            for key in fileKeys {
                if let (value, domain) = world.effective(key, in: process) {
                    lines.append("      - { in: \(process), key: \(key), value: \(PlistJSON.encode(value)), domain: \(domain) }")
                } else {
                    lines.append("      - { in: \(process), key: \(key), absent: true }")
                }
            }
        }
        for process in ["app", "pad"] {
            for key in Self.kvsKeys {
                let expected = world.winners[key]?.value.map { "value: \(PlistJSON.encode($0))" } ?? "absent: true"
                lines.append("      - { in: \(process), kvs: \(key), \(expected) }")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
