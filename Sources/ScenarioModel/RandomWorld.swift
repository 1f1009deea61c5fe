import AppModel
import AppProtocol
import Foundation
import PropertyList

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
    /// are an hour or more apart, so writes of different devices are ordered
    /// by their clocks; one device's writes by the order it made them.
    struct CloudWrite {
        var clockSkew: Int64
        var index: Int
        var device: String
        var value: PlistValue?

        func wins(over other: CloudWrite) -> Bool { (clockSkew, index) > (other.clockSkew, other.index) }
    }

    /// Each device's clock skew, in milliseconds.
    let clockSkew: [String: Int64]
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
        clockSkew = ["iPhone": 0, "iPad": history.padClockSkewMilliseconds]
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
        if case .integer(let now)? = files[device]![counter] {
            files[device]![counter] = .integer(now + Int64(by))
        } else {
            files[device]![counter] = .integer(Int64(by))
        }
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
        let write = CloudWrite(clockSkew: clockSkew[device]!, index: index, device: device, value: value)
        if winners[key].map({ write.wins(over: $0) }) ?? true { winners[key] = write }
        writtenBy[device, default: []].insert(key)
    }

    /// Applies one operation; returns its steps as scenario lines (none if it means nothing now).
    mutating func perform(_ operation: RandomRun.Operation) -> [String] {
        steps(for: operation).flatMap { StepWriter.lines($0) }
    }

    /// Applies one operation; returns its steps (none if it means nothing now).
    mutating func steps(for operation: RandomRun.Operation) -> [Step.Action] {
        defer { index += 1 }
        return defaultsSteps(for: operation) ?? cloudSteps(for: operation)
    }

    // MARK: Steps

    static func write(_ process: String, _ request: AppRequest) -> Step.Action { .command(process: process, request) }
    static func synchronize(_ process: String) -> Step.Action { .command(process: process, .synchronize) }
    static func together(_ actions: [Step.Action]) -> Step.Action {
        .parallel(actions.map { Step(action: $0, line: 0, keyword: "", summary: "") })
    }

    /// The steps of an operation on the defaults side; nil for one on the iCloud side.
    mutating func defaultsSteps(for operation: RandomRun.Operation) -> [Step.Action]? {
        writeSteps(for: operation) ?? lifeSteps(for: operation)
    }

    /// The processes' writes (sets, counters, lists, intents, registrations, suites).
    private mutating func writeSteps(for operation: RandomRun.Operation) -> [Step.Action]? {
        typealias W = RandomWorld
        switch operation {
        case .set(let process, let key, let value):
            files[RandomRun.device(of: process)]![key] = .integer(Int64(value))
            return [W.write(process, .set(key: key, value: .integer(Int64(value)))), W.synchronize(process)]
        case .remove(let process, let key):
            files[RandomRun.device(of: process)]![key] = nil
            return [W.write(process, .remove(key: key)), W.synchronize(process)]
        case .increment(let process, let counter, let by):
            increment(counter, by: by, on: RandomRun.device(of: process))
            return [W.write(process, .increment(key: counter, by: Int64(by)))]
        case .append(let process, let value):
            append(.integer(Int64(value)), to: RandomRun.list, on: RandomRun.device(of: process))
            return [W.write(process, .append(key: RandomRun.list, values: [.integer(Int64(value))]))]
        case .intent(let device, let count, let text):
            if count { increment("noteCount", by: 1, on: device) } else { append(.string("note\(text)"), to: "notes", on: device) }
            return [
                .intent(IntentStep(name: count ? "CountNote" : "AddNote", parameters: count ? [:] : ["text": "note\(text)"], device: device))
            ]
        case .concurrent(let appKey, let appValue, let widgetKey, let widgetValue):
            file[appKey] = .integer(Int64(appValue))
            file[widgetKey] = .integer(Int64(widgetValue))
            return [
                W.together([
                    W.write("app", .set(key: appKey, value: .integer(Int64(appValue)))),
                    W.write("widget", .set(key: widgetKey, value: .integer(Int64(widgetValue)))),
                ]),
                W.together([W.synchronize("app"), W.synchronize("widget")]),
            ]
        case .register(let process, let key, let value):
            registered[process, default: [:]][key] = .integer(Int64(value))
            return [W.write(process, .register(defaults: [key: .integer(Int64(value))]))]
        case .toggleSuite(let process, let suite):
            if let place = added[process, default: []].firstIndex(of: suite) {
                added[process]!.remove(at: place)
                return [W.write(process, .removeSuite(name: suite))]
            }
            added[process, default: []].insert(suite, at: 0)
            return [W.write(process, .addSuite(name: suite))]
        default:
            return nil
        }
    }

    /// Restarts, kills, suspensions, a corrupt file and an erased device, with the writes around them.
    private mutating func lifeSteps(for operation: RandomRun.Operation) -> [Step.Action]? {
        typealias W = RandomWorld
        switch operation {
        case .restart(let process, let given):
            started(process, arguments: given)
            return [.restart(process: process, arguments: given.keys.sorted().flatMap { ["-\($0)", given[$0]!] })]
        case .killAndRelaunch(let process):
            started(process)
            return [.kill(process: process, signal: SIGKILL, afterAcks: nil), .launch([process])]
        case .suspendedWhileAppWrites(let key, let value):
            file[key] = .integer(Int64(value))
            return [.suspend("widget"), W.write("app", .set(key: key, value: .integer(Int64(value)))), W.synchronize("app"), .resume("widget")]
        case .corruptThenWrite(let key, let value):
            file = [key: .integer(Int64(value))]
            return [
                .corrupt(domain: RandomRun.suite, device: nil, content: ScenarioParser.notAPropertyList),
                W.write("app", .set(key: key, value: .integer(Int64(value)))), W.synchronize("app"),
            ]
        case .eraseDevice(let device):
            return erase(device)
        default:
            return nil
        }
    }

    /// What the device had not uploaded would be lost, by a timing no model
    /// can know: everything is brought up and in agreement first.
    mutating func erase(_ device: String) -> [Step.Action] {
        var steps = settleSteps()
        files[device] = [:]
        addedSuiteFiles[device] = [:]
        writtenBy[device] = []
        let app = RandomRun.cloudApp(on: device)
        started(app)
        steps += [.eraseDevice(device), .cloud(.signIn(device: device, account: "alice"))]
        // The erase took the device's clock setting with it; set it again,
        // so the two devices' clocks stay apart.
        if clockSkew[device] != 0 { steps.append(.cloud(.network(device: device, .skew(milliseconds: clockSkew[device]!)))) }
        steps.append(.restart(process: app, arguments: []))
        steps.append(Self.firstDownloads)
        return steps
    }

    /// Waits until every device has had its first download of the store
    /// (and agrees with the cloud). A write made before it is held and may be
    /// overwritten by it (Apple's store does the same), and whether an agent
    /// killed right after a launch or an erase had downloaded yet is a timing
    /// no model can know: the history's writes come after it.
    static let firstDownloads = Step.Action.cloud(.waitForQuiescence(timeout: ScenarioParser.defaultCloudWait))

    /// The steps of an operation on the iCloud side.
    mutating func cloudSteps(for operation: RandomRun.Operation) -> [Step.Action] {
        typealias W = RandomWorld
        switch operation {
        case .kvsSet(let process, let key, let value):
            cloudWrite(.integer(Int64(value)), key: key, by: process)
            return [W.write(process, .cloudSet(key: key, value: .integer(Int64(value)))), W.synchronize(process)]
        case .kvsRemove(let process, let key):
            guard writtenBy[RandomRun.device(of: process)]?.contains(key) == true else { return [] }
            cloudWrite(nil, key: key, by: process)
            return [W.write(process, .cloudRemove(key: key)), W.synchronize(process)]
        case .kvsConcurrent(let key, let appValue, let padValue):
            cloudWrite(.integer(Int64(appValue)), key: key, by: "app")
            cloudWrite(.integer(Int64(padValue)), key: key, by: "pad")
            return [
                W.together([
                    W.write("app", .cloudSet(key: key, value: .integer(Int64(appValue)))),
                    W.write("pad", .cloudSet(key: key, value: .integer(Int64(padValue)))),
                ]),
                W.together([W.synchronize("app"), W.synchronize("pad")]),
            ]
        case .toggleOnline(let device):
            if online.remove(device) != nil { return [.cloud(.network(device: device, .offline))] }
            online.insert(device)
            return [.cloud(.network(device: device, .online))]
        case .togglePartition(let device):
            guard cloudRunning else { return [] }
            if partitioned.remove(device) != nil { return [.cloud(.network(device: device, .heal))] }
            partitioned.insert(device)
            return [.cloud(.network(device: device, .partition))]
        case .pushFault(let device, let duplicate, let count):
            guard cloudRunning else { return [] }
            return [.cloud(.network(device: device, duplicate ? .duplicatePushes(Int64(count)) : .dropPushes(Int64(count))))]
        case .toggleAgent(let device):
            if agentRunning.remove(device) != nil { return [.cloud(.killAgent(device: device))] }
            agentRunning.insert(device)
            return [.cloud(.restartAgent(device: device))]
        case .toggleCloud:
            if cloudRunning {
                cloudRunning = false
                return [.cloud(.killCloud)]
            }
            // The cloud keeps its faults in memory: a restarted one has none.
            cloudRunning = true
            partitioned = []
            return [.cloud(.restartCloud)]
        case .quiesce:
            return settleSteps()
        case .kvsChurn(let rounds):
            return churn(rounds: rounds)
        default:
            preconditionFailure("\(operation) is an operation on the defaults side")
        }
    }

    /// The iPad's app writes 1000 keys of its own and removes them, `rounds`
    /// times: more removals than a store keeps, so the cloud and the copies
    /// forget the oldest and the cloud's horizon moves. Everything is brought
    /// up and in agreement first, and the iPad churns, so what the horizon
    /// does is what the model says: no write is pending when it moves, and
    /// every later write is stamped after it (the iPad's own clock stamped
    /// the removals; the iPhone's, if behind, is never behind the horizon,
    /// which is at most the cloud's clock). The model's keys are untouched.
    mutating func churn(rounds: Int) -> [Step.Action] {
        var steps = settleSteps()
        for round in 0..<rounds {
            for removes in [false, true] {
                var burst = Burst(process: "pad", count: 1000, keyTemplate: "churn\(round)-{i}", value: nil, syncEvery: nil, waitForResponses: true)
                burst.cloud = true
                burst.removes = removes
                steps.append(.burst(burst))
            }
        }
        steps.append(Self.synchronize("pad"))
        steps.append(Self.firstDownloads)
        return steps
    }

    /// Ends every fault, then waits until the devices and the cloud agree,
    /// and checks that they agree on what the model says (as scenario lines).
    mutating func settle() -> [String] { settleSteps().flatMap { StepWriter.lines($0) } }

    mutating func settleSteps() -> [Step.Action] {
        var steps: [Step.Action] = []
        if cloudRunning {
            steps += partitioned.sorted().map { .cloud(.network(device: $0, .heal)) }
        } else {
            steps.append(.cloud(.restartCloud))
        }
        cloudRunning = true
        partitioned = []
        for device in RandomRun.devices.filter({ !online.contains($0) }) { steps.append(.cloud(.network(device: device, .online))) }
        for device in RandomRun.devices.filter({ !agentRunning.contains($0) }) { steps.append(.cloud(.restartAgent(device: device))) }
        online = Set(RandomRun.devices)
        agentRunning = Set(RandomRun.devices)
        steps.append(.cloud(.waitForQuiescence(timeout: ScenarioParser.defaultCloudWait)))
        var checks: [Check] = []
        for key in RandomRun.kvsKeys {
            let winner = winners[key]
            let value: PlistValue?? = .some(winner?.value)
            checks.append(
                .cloud(
                    .cloudValue(
                        store: RandomRun.store, account: "alice", key: key, value: value,
                        writtenBy: winner?.value == nil ? nil : winner?.device, aheadMs: nil)))
            for device in RandomRun.devices {
                checks.append(.cloud(.copyValue(device: device, store: RandomRun.store, key: key, value: winner?.value)))
            }
        }
        steps.append(.expect(checks.map { LocatedCheck(check: $0, line: 0) }))
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
    package var yaml: String {
        var world = RandomWorld(history: self)
        let lines = [
            "name: random-\(seed)-\(operations.count)",
            "summary: A randomized history (seed \(seed), \(operations.count) operations) of the app and the widget on an iPhone and the app on an iPad, "
                + "with their suites and their iCloud store; the checks are the model's.",
            "tags: [random]",
            "app:",
            Self.manifest,
            "devices:",
            "  - iPhone: { account: alice }",
            "  - iPad: { account: alice, clock-skew-ms: \(padClockSkewMilliseconds) }",
            "processes:",
            "  app: { role: main-app }",
            "  widget: { role: widget }",
            "  pad: { role: main-app, device: iPad }",
            "steps:",
        ]
        var steps: [Step.Action] = []
        // The added suites' contents, written before anyone reads them.
        for device in Self.devices {
            for suite in Self.addedSuites {
                guard let values = world.addedSuiteFiles[device]?[suite], !values.isEmpty else { continue }
                let text = values.keys.sorted().map { "\($0) = \(values[$0]!.stringValue ?? "");" }.joined(separator: " ")
                steps.append(.defaults(arguments: ["write", "--device", device, suite, "{ \(text) }"], status: 0, output: nil))
            }
        }
        steps.append(.launch(["app", "widget", "pad"]))
        steps.append(RandomWorld.firstDownloads)
        for operation in operations { steps += world.steps(for: operation) }
        steps += world.settleSteps()
        steps += markerSteps(world)
        steps.append(.expect(finalChecks(world).map { LocatedCheck(check: $0, line: 0) }))
        return (lines + steps.flatMap { StepWriter.lines($0) }).joined(separator: "\n") + "\n"
    }

    /// Once a process has seen a marker written after everything else on its
    /// device (by another process), it has read everything before it.
    func markerSteps(_ world: RandomWorld) -> [Step.Action] {
        let marker = Int64(seed % 1_000_000 + 1)
        func wait(_ event: String, in process: String, key: String? = nil, keys: [String]? = nil) -> Step.Action {
            var matcher = EventMatcher(event: event)
            matcher.key = key
            matcher.keys = keys
            if keys != nil { matcher.reason = "server-change" }
            return .wait(process: process, matcher: matcher, timeout: ScenarioParser.defaultWait)
        }
        func writeMarker(_ device: String, _ suite: String, _ key: String) -> Step.Action {
            .defaults(arguments: ["write", "--device", device, suite, key, "-int", "\(marker)"], status: 0, output: nil)
        }
        var steps: [Step.Action] = [
            RandomWorld.write("app", .set(key: "marker", value: .integer(marker))), RandomWorld.synchronize("app"),
            wait("change", in: "widget", key: "marker"),
            writeMarker("iPad", Self.suite, "marker"), wait("change", in: "pad", key: "marker"),
        ]
        // The same for each added suite a process reads, and for each
        // device's iCloud store: a marker from the other device.
        for device in Self.devices {
            for suite in Self.addedSuites {
                let readers = Self.processes.filter { Self.device(of: $0) == device && world.added[$0]?.contains(suite) == true }
                guard !readers.isEmpty else { continue }
                let suiteMarker = "marker-\(suite.split(separator: ".").last!)"
                steps.append(writeMarker(device, suite, suiteMarker))
                steps += readers.map { wait("change", in: $0, key: suiteMarker) }
            }
        }
        return steps + [
            RandomWorld.write("app", .cloudSet(key: "marker-iPhone", value: .integer(marker))), RandomWorld.synchronize("app"),
            wait("cloud-change", in: "pad", keys: ["marker-iPhone"]),
            RandomWorld.write("pad", .cloudSet(key: "marker-iPad", value: .integer(marker))), RandomWorld.synchronize("pad"),
            wait("cloud-change", in: "app", keys: ["marker-iPad"]),
        ]
    }

    /// What the model says each file, process and iCloud store holds at the end.
    func finalChecks(_ world: RandomWorld) -> [Check] {
        var checks: [Check] = []
        let fileKeys = Self.keys + Self.counters + ["noteCount"]
        for device in Self.devices {
            let file = world.files[device]!
            for key in fileKeys + [Self.list, "notes"] {
                // The markers made both files, so a key's absence is checkable.
                let condition: FileCheck.Condition =
                    switch file[key] {
                    case .array(let items)?: .length(key: key, items.count)
                    case let value?: .value(key: key, value)
                    case nil: .absent(key: key)
                    }
                checks.append(.file(FileCheck(domain: Self.suite, device: device, app: nil, condition: condition)))
            }
        }
        for process in Self.processes {
            for key in fileKeys {
                if let (value, domain) = world.effective(key, in: process) {
                    checks.append(.value(process: process, key: key, value: .some(value), domain: domain))
                } else {
                    checks.append(.value(process: process, key: key, value: .some(nil), domain: nil))
                }
            }
        }
        for process in ["app", "pad"] {
            for key in Self.kvsKeys { checks.append(.cloudValueIn(process: process, key: key, value: world.winners[key]?.value)) }
        }
        return checks
    }
}
