import AppModel
import AppProtocol
import Foundation
import PropertyList

/// What an App Intent returned: its value (`.result(value:)`; nil for none),
/// its dialog's text (`.result(dialog:)`), and its type's `openAppWhenRun`.
public struct IntentOutcome: Sendable, Equatable {
    public let value: Value?
    public let dialog: String?
    public let opensApp: Bool

    /// An outcome, to compare with what `runIntent` or `performIntent` returns.
    /// - Parameters:
    ///   - value: Its value (nil: none).
    ///   - dialog: Its dialog's text (nil: none).
    ///   - opensApp: Its type's `openAppWhenRun`.
    public init(value: Value?, dialog: String?, opensApp: Bool = false) {
        self.value = value
        self.dialog = dialog
        self.opensApp = opensApp
    }
}

extension LaunchedExecutable {
    /// Performs `intent`, one of the App Intents the running program offers
    /// (`GroupSim.offerIntents`, or `runIntents` while it runs, or a widget's
    /// `runWidget(…, intents:)`: a tap on its button, after which the widget
    /// has reloaded), in the program's own process, as the system runs an app's intent there:
    /// `parameters` as `NAME=VALUE` gives them. Returns what `perform()`
    /// returned; an intent that is unknown, refuses its parameters, throws or
    /// runs past its time limit is a failure at the caller's line, with the
    /// intent's error.
    /// - Parameters:
    ///   - intent: The intent's type name.
    ///   - parameters: Its parameters, by name, as text.
    ///   - timeout: How long to wait at most for its result.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the intent is unknown, refuses a parameter, throws, runs past its time limit or `timeout`, or the program has no control channel.
    /// - Returns: What its `perform()` returned.
    @discardableResult
    public func performIntent(
        _ intent: String, parameters: [String: String] = [:], timeout: Duration = .seconds(90),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> IntentOutcome {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let response = try await request(.performIntent(name: intent, parameters: parameters), suite: nil, timeout: timeout, at: place)
        return IntentOutcome(value: response.value, dialog: response.dialog, opensApp: response.opensApp)
    }

    /// A one-shot's intent, once it has exited: its `intent-result`, or the failure its status and error say.
    func intentOutcome(of intent: String, status: Int32, at place: SourcePlace) async throws -> IntentOutcome {
        let said = try await Blocking.run { [record] in
            record.takeEvent(timeout: 10) { event -> Result<IntentOutcome, Failure>? in
                switch event {
                case .intentResult(_, _, let value, let dialog, let opensApp):
                    .success(IntentOutcome(value: value, dialog: dialog, opensApp: opensApp))
                case .error(let message): .failure(Failure(message, at: place))
                default: nil
                }
            }.found
        }
        switch (status, said) {
        case (0, .success(let outcome)?):
            return outcome
        case (0, _):
            throw outcome.failure(
                "\(name) exited with status 0 without reporting intent \(intent) (does its main call GroupSim.runIntents?)", at: place)
        case (_, .failure(let error)?):
            throw outcome.failure("intent \(intent) failed in \(name) (status \(status)): \(error.message)", at: place)
        default:
            catchUpOutput()
            let stderr = record.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
            throw outcome.failure(
                "intent \(intent) failed in \(name) (status \(status))" + (stderr.isEmpty ? "" : ": \(stderr.suffix(500))"), at: place)
        }
    }
}

extension Simulation {
    /// Runs `executable` once as the app's intent extension for `intent`, as
    /// the system runs an intent extension: its command line is `arguments`
    /// (words before the intent, a subcommand say), the intent's name, its
    /// `parameters` as `NAME=VALUE`, then `launchArguments`. Waits for it to
    /// exit (at most `timeout`) and returns what `perform()` returned; a
    /// failure (its status and error: an unknown intent, a bad parameter, a
    /// thrown error, the time limit) fails at the caller's line.
    /// `environment`: `GROUPSIM_INTENT_TIME_LIMIT` sets the limit, for example.
    /// - Parameters:
    ///   - intent: The intent's type name.
    ///   - parameters: Its parameters, by name, as text (`NAME=VALUE` on the command line).
    ///   - executable: The intent extension's executable.
    ///   - arguments: Words before the intent's name on its command line (a subcommand, say).
    ///   - app: The app's bundle id (nil: the one app installed on `device`).
    ///   - device: The device's name.
    ///   - launchArguments: Launch arguments, after the parameters (`-key value` fills its argument domain).
    ///   - environment: Variables added to its environment (`GROUPSIM_INTENT_TIME_LIMIT`, say).
    ///   - timeout: How long to wait at most for it to exit.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when it cannot be launched, does not link SimulatedFoundation, runs past `timeout`, or the intent fails (its status and error).
    /// - Returns: What its `perform()` returned.
    @discardableResult
    public func runIntent(
        _ intent: String, parameters: [String: String] = [:], in executable: Executable, arguments: [String] = [],
        of app: String? = nil, on device: String = "iPhone", launchArguments: [String] = [], environment: [String: String] = [:],
        timeout: Duration = .seconds(90),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> IntentOutcome {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let words = arguments + [intent] + parameters.keys.sorted().map { "\($0)=\(parameters[$0]!)" } + launchArguments
        let program = try await launch(
            executable, as: .intent, of: app, on: device, arguments: words, environment: environment,
            fileID: fileID, filePath: filePath, line: line, column: column)
        guard program.hasControlChannel else { throw program.channelMissing(for: "runIntent(\(intent))", at: place) }
        let status = try await program.waitForExit(timeout: timeout, fileID: fileID, filePath: filePath, line: line, column: column)
        return try await program.intentOutcome(of: intent, status: status, at: place)
    }
}
