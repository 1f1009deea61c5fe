import AppProtocol
import Foundation
import PropertyList
import ScenarioModel

extension ProcessRoster {
    /// An intent of an app that runs its intents in its own process
    /// (manifest `intents: in-app`), as App Intents in the app target do: it
    /// is performed in the running main-app process, or the system launches
    /// that process in the background first. A background-launched app stays
    /// running afterwards (iOS keeps it in memory, suspended; a scenario
    /// that wants it suspended says `suspend`), so later steps can ask it.
    func performIntentInApp(_ intent: IntentStep, in host: String, step: Step) throws {
        if !isRunning(host) { try launch(host, backgroundReason: "to run intent \(intent.name)") }
        let key = context.scenario.app.intents[intent.name]?.key
        context.log.record(
            process: host, kind: .action, name: "intent", fields: key.map { ["key": .string($0)] } ?? [:],
            text: step.summary + " (in the app's process)")
        try performOverChannel(intent, in: host, timeout: RunnerTimeouts.request)
    }

    /// An App Intent of a user's running program (`intent: { in: P }`), over
    /// its control channel; the program is launched first if it is not running.
    func performIntentInProgram(_ intent: IntentStep, in process: String, step: Step) throws {
        if !isRunning(process) { try launch(process) }
        context.log.record(process: process, kind: .action, name: "intent", text: step.summary + " (in its running program)")
        // The program bounds perform() itself; the answer may take that long.
        try performOverChannel(intent, in: process, timeout: RunnerTimeouts.request + IntentVerdict.timeLimit)
    }

    private func performOverChannel(_ intent: IntentStep, in process: String, timeout: Double) throws {
        let driver = try driver(process)
        let id = driver.send(.performIntent(name: intent.name, parameters: intent.parameters))
        guard let answer = try driver.waitForResponse(id, timeout: timeout).response else {
            throw ScenarioRunError.check("\(process) answered perform-intent without a response")
        }
        let reported = answer.ok ? IntentReport(value: answer.value, dialog: answer.dialog) : nil
        try IntentVerdict(intent: intent, where: process).judge(reported: reported, failure: answer.ok ? nil : answer.error ?? "no reason given")
    }

    /// A user's one-shot intent executable (`exec:` with `target: intent`), run
    /// once with the intent's name and parameters and waited for, as the
    /// system runs an intent extension: its status, result and dialog judged.
    func runIntentOnce(_ intent: IntentStep, in process: String, step: Step) throws {
        let spec = context.scenario.processes[process]!
        let words = [intent.name] + intent.parameters.keys.sorted().map { "\($0)=\(intent.parameters[$0]!)" } + spec.arguments + intent.arguments
        let driver = try launchOneShot(process, words: words)
        let limit = IntentVerdict.timeLimit + (spec.executable?.startTimeout ?? RunnerTimeouts.startUp) + RunnerTimeouts.exit
        guard let status = driver.waitForExit(timeout: limit) else {
            driver.signal(SIGKILL)
            throw ScenarioRunError.check(
                "\(process) did not exit within \(Int(limit)) s of its start (its intent's time limit, start-up and exit)" + driver.lastLines)
        }
        try IntentVerdict(intent: intent, where: process).judgeOneShot(
            status: status, events: driver.recordedEvents(), standardError: driver.standardError)
    }
}

/// What an App Intent reported: its value and dialog.
struct IntentReport {
    let value: PlistValue?
    let dialog: String?
}

/// An intent step's checks on what the intent did: its failure (`error`),
/// its one-shot's status, its value (`result`) and its dialog.
struct IntentVerdict {
    let intent: IntentStep
    /// The process it ran in, as failures name it.
    let place: String

    init(intent: IntentStep, where place: String) {
        self.intent = intent
        self.place = place
    }

    /// The time limit a scenario process's intents get: its `env:` cannot set it (the runner keeps GROUPSIM_* to itself), so Apple's.
    static let timeLimit = AppIntentRun.timeLimitSeconds

    /// `reported`: what it returned; nil with `failure`, why it failed.
    func judge(reported: IntentReport?, failure: String?) throws {
        if let failure {
            guard let wanted = intent.error else { throw ScenarioRunError.check("intent \(intent.name) failed in \(place): \(failure)") }
            guard failure.contains(wanted) else {
                throw ScenarioRunError.check(
                    "intent \(intent.name) failed in \(place) as expected, but did not say \(PlistJSON.quote(wanted)); it said: \(failure)")
            }
            return
        }
        if let wanted = intent.error {
            throw ScenarioRunError.check("intent \(intent.name) should have failed in \(place), saying \(PlistJSON.quote(wanted)); it succeeded")
        }
        try checkIntentResult(intent.name, expected: intent.result, reported: reported.map(\.value))
        if let dialog = intent.dialog, reported?.dialog != dialog {
            throw ScenarioRunError.check(
                "intent \(intent.name) should have said the dialog \(PlistJSON.quote(dialog)), it said "
                    + (reported?.dialog.map(PlistJSON.quote) ?? "none"))
        }
    }

    /// A one-shot's run, from its exit status and what it said (events, stderr).
    func judgeOneShot(status: Int32, events: [RecordedEvent], standardError: String) throws {
        let errors = events.compactMap { if case .error(let message)? = $0.appEvent { message } else { nil } }
        let failure = errors.first ?? standardError.trimmingCharacters(in: .whitespacesAndNewlines)
        guard intent.accepts(status: status) else {
            throw ScenarioRunError.check(
                "\(place) exited with status \(status), expected \(intent.expectedStatus)" + (failure.isEmpty ? "" : ": \(failure)"))
        }
        let report = events.lazy.compactMap { event -> IntentReport? in
            if case .intentResult(_, _, let value, let dialog, _)? = event.appEvent { IntentReport(value: value, dialog: dialog) } else { nil }
        }.first
        if status == 0 {
            try judge(reported: report, failure: nil)
        } else if intent.error != nil {
            // The status was what was expected; without `error` it is the whole verdict.
            try judge(reported: nil, failure: failure.isEmpty ? "status \(status), nothing said" : failure)
        }
    }
}
