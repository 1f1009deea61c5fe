import AppModel
import AppProtocol
import PropertyList
import SpecFormat

/// An `intent` step: which intent, where it runs, and what it must report.
package struct IntentStep: Sendable, Equatable {
    /// Where the intent runs.
    package enum Place: Sendable, Equatable {
        /// A one-shot process of the built-in intent extension.
        case builtInExtension
        /// The built-in main-app process of that name (manifest `intents: in-app`), launched in the background if not running.
        case builtInApp(String)
        /// A scenario process that runs the user's App Intents (`in:`): one-shot for `target: intent`, else its running program.
        case executable(String, oneShot: Bool)
    }

    package var name: String
    package var parameters: [String: String]
    package var device: String?
    /// The exit status a one-shot must end with; nil: 0, or any but 0 when `error` is given.
    package var status: Int32?
    /// Launch arguments of a one-shot.
    package var arguments: [String]
    /// The value it must report (the built-in intents: stored); Some(nil): absent.
    package var result: PlistValue??
    /// The dialog an App Intent must return.
    package var dialog: String?
    /// Text the intent's failure must say; given, the intent must fail.
    package var error: String?
    package var place: Place

    package init(
        name: String, parameters: [String: String] = [:], device: String? = nil, status: Int32? = nil, arguments: [String] = [],
        result: PlistValue?? = nil, dialog: String? = nil, error: String? = nil, place: Place = .builtInExtension
    ) {
        self.name = name
        self.parameters = parameters
        self.device = device
        self.status = status
        self.arguments = arguments
        self.result = result
        self.dialog = dialog
        self.error = error
        self.place = place
    }

    /// Whether a one-shot's exit status is the one wanted.
    package func accepts(status actual: Int32) -> Bool {
        if let status { return actual == status }
        return error == nil ? actual == 0 : actual != 0
    }

    /// The status a one-shot must end with, as reports say it.
    package var expectedStatus: String { status.map(String.init) ?? (error == nil ? "0" : "a failure (any but 0)") }
}

extension ScenarioParser {
    @Sendable static func readIntent(_ input: StepInput) throws -> (Step.Action, String) {
        let fields = try input.fields()
        var step = IntentStep(name: try fields.node("name").string())
        if let node = fields["result"] {
            step.result = node.node.null != nil && node.node.scalar?.style == .plain ? .some(nil) : .some(try node.plistValue())
        }
        step.status = try fields.number("status").map { Int32($0) }
        step.parameters = try parameters(fields["params"])
        step.device = try fields.device("device")
        step.arguments = try fields.words("args") ?? []
        step.dialog = try fields.text("dialog")
        step.error = try fields.text("error")
        if step.error != nil, step.result != nil || step.dialog != nil {
            throw (fields["result"] ?? fields.node("dialog")).error("an intent that must fail (error) reports no result or dialog; leave them out")
        }
        let summary =
            "intent \(step.name)"
            + (step.parameters.isEmpty ? "" : " " + step.parameters.keys.sorted().map { "\($0)=\(step.parameters[$0]!)" }.joined(separator: " "))
        if fields["in"] != nil {
            step.place = try userPlace(fields, step: step, input)
            if case .executable(let process, _) = step.place { return (.intent(step), summary + " in \(process)") }
            return (.intent(step), summary)
        }
        if let dialog = fields["dialog"] {
            throw dialog.error("the built-in intents return no dialog; dialog is for an App Intent of your executable (in: PROCESS)")
        }
        let app = input.context.app
        guard let extensionTarget = app.targets[.intentExtension] else {
            throw input.body.error("the app '\(app.name)' has no intent-extension target")
        }
        // A failure's exit status and launch arguments are a one-shot process's: those steps run the extension.
        if app.intentsRun == .inApp && step.status == nil && step.arguments.isEmpty {
            step.place = .builtInApp(try inAppIntentHost(input, device: step.device))
        }
        guard extensionTarget.intents[step.name] != nil else {
            // Unknown intents are allowed only when the scenario expects the failure.
            if step.status ?? 0 == 0 && step.error == nil {
                throw fields.node("name").error(
                    "the intent extension has no intent '\(step.name)'; it has: "
                        + "\(extensionTarget.intents.keys.sorted().joined(separator: ", ")) (expect status: 1 or an error to show the failure)")
            }
            return (.intent(step), "intent \(step.name)")
        }
        return (.intent(step), summary)
    }

    /// The intent step as `readIntent` reads it back.
    @Sendable static func writeIntent(_ action: Step.Action) -> StepSpec.Written? {
        guard case .intent(let step) = action else { return nil }
        var fields = [("name", YAMLText.scalar(step.name))]
        if !step.parameters.isEmpty {
            fields.append(("params", YAMLText.mapping(step.parameters.keys.sorted().map { ($0, YAMLText.scalar(step.parameters[$0]!)) })))
        }
        if let device = step.device { fields.append(("device", YAMLText.scalar(device))) }
        if case .executable(let process, _) = step.place { fields.append(("in", YAMLText.scalar(process))) }
        if let status = step.status { fields.append(("status", "\(status)")) }
        if !step.arguments.isEmpty { fields.append(("args", YAMLText.words(step.arguments))) }
        if let result = step.result { fields.append(("result", YAMLText.optionalValue(result))) }
        if let dialog = step.dialog { fields.append(("dialog", YAMLText.scalar(dialog))) }
        if let error = step.error { fields.append(("error", YAMLText.scalar(error))) }
        return .mapping(fields)
    }

    /// `in: P`: P runs the user's App Intents (an `exec:` process), or is the built-in main app of an in-app manifest.
    private static func userPlace(_ fields: StepFields, step: IntentStep, _ input: StepInput) throws -> IntentStep.Place {
        let process = try fields.process("in")
        let spec = input.context.processes[process]!
        if let device = fields["device"] { throw device.error("an intent run in \(process) runs on its device (\(spec.device)); leave out device") }
        guard spec.executable != nil else {
            guard spec.role == .mainApp, input.context.app.intentsRun == .inApp else {
                throw fields.node("in").error(
                    "\(process) is the built-in \(spec.role.rawValue), which runs no App Intents; in: names an exec: process "
                        + "(target: intent for a one-shot, or one with a control channel), or the built-in main app of a manifest with intents: in-app"
                )
            }
            for key in ["status", "args", "dialog"] where fields[key] != nil {
                throw fields.node(key).error("\(key) is not for the built-in main app's intents (leave out in: to run the intent extension)")
            }
            return .builtInApp(process)
        }
        if spec.role == .intentExtension { return .executable(process, oneShot: true) }
        guard spec.hasControlChannel else {
            throw fields.node("in").error(
                "\(process) has no control channel, which performing an intent in its running program needs (give it target: intent "
                    + "to run it once per intent instead); \(spec.executable?.noControlReason ?? "")")
        }
        for key in ["status", "args"] where fields[key] != nil {
            throw fields.node(key).error(
                "\(key) belongs to a one-shot (an exec: process with target: intent); an intent of \(process)'s running program fails with error: TEXT"
            )
        }
        return .executable(process, oneShot: false)
    }

    /// The main-app process an in-app intent runs in on the step's device:
    /// the first by name of the scenario's built-in main-app processes there.
    static func inAppIntentHost(_ input: StepInput, device: String?) throws -> String {
        let device = device ?? input.context.devices.first ?? "iPhone"
        let candidates = input.context.processes.values.filter { $0.role == .mainApp && $0.device == device && $0.executable == nil }
        guard let host = candidates.map(\.name).sorted().first else {
            throw input.body.error(
                "the app runs its intents in its own process (intents: in-app), and the scenario has no main-app process on \(device) "
                    + "to run this one in: declare one (processes: { app: { role: main-app } }); the intent launches it in the background if it is not running"
            )
        }
        return host
    }
}
