import AppModel
import AppProtocol
import Foundation
import PropertyList
import SimulationValues

/// One scenario file, checked and ready to run.
package struct Scenario: Sendable {
    package let name: String
    package let summary: String
    package let file: String
    package let tags: [String]
    package let app: AppManifest
    /// How the processes get the app: the built-in example, a manifest file, or inline YAML.
    package let appSource: AppSource
    package let devices: [String]
    /// The devices with their cloud settings (account, clock, network).
    package let deviceSpecs: [DeviceSpec]
    package let processes: [String: ProcessSpec]
    package let steps: [Step]

    package var defaultDevice: String { devices.first ?? "iPhone" }

    /// Whether a run starts the cloud and a sync agent per device: when a
    /// device has an account or a step or check speaks of the cloud.
    package var usesCloud: Bool {
        deviceSpecs.contains { $0.account != nil } || steps.contains { $0.usesCloud }
    }
}

package enum AppSource: Sendable {
    case example
    case file(String)
    case inline(yaml: String)
}

/// A long-lived process the steps refer to by name: a built-in role, or a
/// user's own executable playing one of the app's targets (`executable`).
package struct ProcessSpec: Sendable {
    package let name: String
    /// The built-in role, or the target a user's executable plays.
    package let role: Role
    package let device: String
    package let arguments: [String]
    package var executable: ExecutableSpec? = nil
    /// `launch: background`: the app runs in the background (the system launched it), as its widget reload budget sees it.
    package var launchesInBackground = false

    /// Whether the runner speaks the control protocol with it (every built-in role does).
    package var hasControlChannel: Bool { executable?.control ?? true }
}

/// A user's own executable as a scenario process (`exec:`), started as
/// `groupsim exec` starts it.
package struct ExecutableSpec: Sendable {
    /// The file, found when the scenario was loaded.
    package let path: String
    /// The arguments after the path in the `exec` list (the launch arguments follow them).
    package let arguments: [String]
    /// Added to its environment (its identity's variables win).
    package let environment: [String: String]
    /// Whether the runner gives it a control channel, which SimulatedFoundation serves.
    package let control: Bool
    /// Why it has none, for the error of a step that needs one.
    package let noControlReason: String?
    /// Whether its own file links SimulatedFoundation (read from its ELF symbols),
    /// whose load hook unblocks its signals and ties it to the runner; false
    /// for a script that starts such an executable, even with `control: true`.
    package let linksSimulatedFoundation: Bool
    /// How long it has to connect to its channel and answer a ping (`start-timeout`), in seconds.
    package var startTimeout = ScenarioParser.defaultStartTimeout
}

/// One step, with where it is written (for reports).
package struct Step: Sendable, Equatable {
    package let action: Action
    package let line: Int
    /// The step's keyword, e.g. "set" or "wait".
    package let keyword: String
    /// A short text for reports, e.g. "set theme = dark in app".
    package let summary: String
    /// The step ends its process (`exits:`): judged by the process's real exit, not by an answer.
    package let exits: ExpectedExit?

    package init(action: Action, line: Int, keyword: String, summary: String, exits: ExpectedExit? = nil) {
        self.action = action
        self.line = line
        self.keyword = keyword
        self.summary = summary
        self.exits = exits
    }

    /// The same step, wherever and however it is written (its line and summary aside).
    package static func == (lhs: Step, rhs: Step) -> Bool {
        lhs.action == rhs.action && lhs.keyword == rhs.keyword && lhs.exits == rhs.exits
    }

    package indirect enum Action: Sendable, Equatable {
        case launch([String])
        /// The launch must fail: the process exits with `status` and says `message` (an error event or stderr).
        case launchFails(process: String, message: String, status: Int32)
        /// Waits for the answers of a burst started with `background: true`.
        case waitBurst(String)
        case restart(process: String, arguments: [String]?)
        case quit(String)
        /// `suite`: which `UserDefaults` of an `exec:` process the request goes through (`Scenario.suiteName`).
        case command(process: String, AppRequest, suite: SuiteChoice = .processDefault)
        /// An intent performed: by the built-in intent extension or main app, or by a user's executable.
        case intent(IntentStep)
        /// `output`: text stdout must contain (what `read`, `read-type` or `export -` printed).
        case defaults(arguments: [String], status: Int32, output: String?)
        case wait(process: String, matcher: EventMatcher, timeout: Double)
        /// No matching event may arrive in the process for `seconds` from now.
        case quiet(process: String, matcher: EventMatcher, seconds: Double)
        case kill(process: String, signal: Int32, afterAcks: Int?)
        case suspend(String)
        case resume(String)
        case corrupt(domain: String, device: String?, content: String)
        case deleteFile(domain: String, device: String?)
        case eraseDevice(String)
        /// An administrator's change of the managed preferences of a domain: `app`'s (a bundle id), or with
        /// `suite` an app group's (written back as `suite:`).
        case managed(device: String?, app: String, ManagedChange, suite: Bool = false)
        case burst(Burst)
        case parallel([Step])
        /// `repeat`: the steps in order, `times` times over.
        case repeated(times: Int, [Step])

        /// How many steps this one runs (a repeat's, multiplied; bounded by the parser).
        package var stepsRun: Int {
            switch self {
            case .repeated(let times, let steps): times * steps.map(\.action.stepsRun).reduce(0, +)
            default: 1
            }
        }
        /// Each check with the line it is written on (a failure points at it).
        case expect([LocatedCheck])
        /// A command run for its verdict (in the scenario file's folder, with GROUPSIM_ROOT set).
        case run(arguments: [String], status: Int32, output: String?)
        case cloud(CloudAction)
        /// A line written to the process's stdin.
        case send(process: String, line: String)
        /// The device restarts, locked until `unlock` (its first unlock): processes launched meanwhile read no preferences.
        case reboot(device: String?, protection: DataProtection)
        /// The person's first unlock after a reboot.
        case unlock(device: String?)
        /// The system launches a built-in role ahead of time (prewarming), without waiting for it to come up.
        case prewarm(String)
        /// The device's simulated clock moves forward (`DeviceClock`), without waiting.
        case advanceClock(device: String?, seconds: Double)
        /// A domain's plist changed in place outside the store (an editor, PlistBuddy); `value` nil removes the key.
        case editFile(domain: String, device: String?, key: String, value: PlistValue?)
    }

    /// The processes this step speaks the control protocol with (a step inside `parallel` or a check is asked on its own).
    package var controlledProcesses: [String] {
        switch action {
        case .command(let process, _, _), .waitBurst(let process): [process]
        case .burst(let burst): [burst.process]
        case .wait(let process, let matcher, _), .quiet(let process, let matcher, _): matcher.needsControl ? [process] : []
        case .kill(let process, _, let afterAcks): afterAcks == nil ? [] : [process]
        default: []
        }
    }

    var usesCloud: Bool {
        switch action {
        case .cloud: true
        case .command(_, let request, _):
            switch request {
            case .cloudSet, .cloudRemove, .cloudGet, .cloudDump, .cloudSynchronize: true
            default: false
            }
        case .parallel(let steps), .repeated(_, let steps): steps.contains { $0.usesCloud }
        case .expect(let checks): checks.contains { if case .cloud = $0.check { true } else { false } }
        default: false
        }
    }
}

/// How a step that ends its process must end it: its exit status as a shell shows it (134 for SIGABRT), and text
/// its stderr (or an `error` event) must say.
package struct ExpectedExit: Sendable, Equatable {
    package let status: Int32
    package let error: String?

    package init(status: Int32, error: String?) {
        self.status = status
        self.error = error
    }
}

package struct Burst: Sendable, Equatable {
    package let process: String
    package let count: Int
    package let keyTemplate: String
    /// nil: the value is the integer i.
    package let value: PlistValue?
    package let syncEvery: Int?
    /// False when a later `kill` of the same process cuts the burst short.
    package var waitForResponses: Bool
    /// Writes go to the iCloud key-value store instead of the defaults suite.
    package var cloud = false
    /// The runner goes on with the next steps while the burst runs (`wait-burst` waits for it).
    package var background = false
    /// `pace-ms`: one write every that many ms (a person tapping, a sync loop) instead of all at once.
    package var paceMilliseconds: Int? = nil
    /// `simulated-pace: true`: each pause moves the device's simulated clock on by the pace (`advance-clock`) instead of
    /// waiting for real: what counts time on that clock (the iCloud upload interval) sees the writes spread, and nothing waits.
    package var simulatedPace = false
    /// `remove: true`: each key is removed instead of set (churn: a burst of sets, then one of removals).
    package var removes = false

    package init(process: String, count: Int, keyTemplate: String, value: PlistValue?, syncEvery: Int?, waitForResponses: Bool) {
        self.process = process
        self.count = count
        self.keyTemplate = keyTemplate
        self.value = value
        self.syncEvery = syncEvery
        self.waitForResponses = waitForResponses
    }

    package func key(_ index: Int) -> String { keyTemplate.replacingOccurrences(of: "{i}", with: String(index)) }
    package func value(_ index: Int) -> PlistValue { value ?? .integer(Int64(index)) }
}

/// Which `UserDefaults` of an `exec:` process a value step or check goes
/// through (`suite:`): its target's app group when the manifest gives it
/// exactly one (users' settings live there), or `.standard`; `standard`;
/// or a suite by name. A built-in role answers from its manifest's suite.
package enum SuiteChoice: Sendable, Equatable {
    case processDefault, standard
    case named(String)

    /// `suite: standard`.
    package static let standardName = "standard"
}

extension Scenario {
    /// The suite name a request to `process` carries for `choice` (nil: `UserDefaults.standard`, or a built-in role's own).
    package func suiteName(of process: String, _ choice: SuiteChoice) -> String? {
        guard let spec = processes[process], spec.executable != nil else { return nil }
        switch choice {
        case .standard: return nil
        case .named(let name): return name
        case .processDefault:
            guard let groups = app.targets[spec.role]?.appGroups, groups.count == 1 else { return nil }
            return groups[0]
        }
    }
}
