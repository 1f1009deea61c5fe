import AppProtocol
import Foundation
import GroupDefaults
import PropertyList
import SimulatedFoundation
import SimulationValues

extension GroupSim {
    /// The main of an intent extension: performs one of `intents` as the
    /// system does, and exits. With an intent's name and `NAME=VALUE`
    /// parameters in `arguments` (by default the command line's), it
    /// performs that one once; without (a person at a terminal), it reads one
    /// intent per line from standard input until its end.
    ///
    /// Each run is reported as an `intent-result` event on the control channel
    /// (its value, dialog and `openAppWhenRun`) and as a line on standard
    /// output (`AddNoteIntent: value=3 dialog="Added."`); a failure as an
    /// `error` event and a line on standard error. The process exits with 0
    /// when `perform()` returned, 1 when it threw, 2 for a request that
    /// cannot run (an unknown intent, a parameter it lacks, does not take or
    /// cannot read), 124 when `perform()` did not return within the time
    /// limit (30 s, as Apple's; `GROUPSIM_INTENT_TIME_LIMIT` seconds in its
    /// place). Reading lines, the status is the last failure's (0 if none).
    ///
    /// A running program's `perform-intent` requests are answered too, as
    /// `offerIntents(_:)` does. The main thread serves the main queue
    /// meanwhile, so a `@MainActor` `perform()` runs.
    /// - Parameters:
    ///   - intents: The intent types this program runs, found by their type names.
    ///   - arguments: The command line (the intent's name and its parameters).
    public static func runIntents(_ intents: any AppIntent.Type..., arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        let catalog = offer(intents)
        let runner = Thread {
            exit(IntentHost(catalog: catalog).runCommandLine(arguments))
        }
        runner.name = "groupsim.intents"
        runner.start()
        dispatchMain()
    }

    /// Offers `intents` to the program's control channel: a driver's
    /// `perform-intent` request (the scenario runner, a test, for an app
    /// whose intents run in its own process) performs one of them in this
    /// process, on the channel's request worker, and answers with its value,
    /// dialog and `openAppWhenRun`, or with its error; an `intent-result`
    /// event is said too. The program's main goes on as before. A later call
    /// replaces the intents offered.
    /// - Parameter intents: The intent types offered, found by their type names.
    public static func offerIntents(_ intents: any AppIntent.Type...) {
        _ = offer(intents)
    }

    /// Offers `intents` as `offerIntents(_:)` does, and calls `performed` with an intent's name once it has run and
    /// its writes are saved, before the request is answered (a widget reloads its timeline there, as WidgetKit does
    /// after a button's intent). An intent that failed calls nothing.
    @discardableResult
    package static func offer(_ intents: [any AppIntent.Type], then performed: (@Sendable (String) -> Void)? = nil) -> IntentCatalog {
        let limit = AppIntentRun.timeLimit(environment: SimulationEnvironment.current.values)
        if let problem = limit.problem { Diagnostics.report(Diagnostic(kind: .invalidEnvironment, message: problem)) }
        let catalog = IntentCatalog(intents, timeLimit: limit.seconds)
        let host = IntentHost(catalog: catalog)
        ControlRequestHandlers.install(.performIntent) { request in
            let response = try host.answer(request)
            if case .performIntent(let name, _) = request { performed?(name) }
            return response
        }
        return catalog
    }
}

/// Runs the catalog's intents for the command line, typed lines and control
/// requests, and reports each run.
struct IntentHost: Sendable {
    let catalog: IntentCatalog

    /// A `perform-intent` request's answer (a failure is thrown, and the channel says it as the request's error).
    func answer(_ request: AppRequest) throws -> AppResponse {
        guard case .performIntent(let name, let parameters) = request else { throw AppProtocolError.refused("\(request) is not perform-intent") }
        switch run(name, parameters: parameters, inProgram: true) {
        case .success(let outcome): return .intent(value: outcome.value, dialog: outcome.dialog, opensApp: outcome.opensApp)
        case .failure(let error): throw AppProtocolError.refused(error.description)
        }
    }

    /// One run, reported: an `intent-result` event and, for a one-shot, a line for a person; a one-shot's failure as an
    /// `error` event and a line on stderr (`inProgram`: a request to a running program, whose answer carries the failure).
    func run(_ name: String, parameters: [String: String], inProgram: Bool = false) -> Result<IntentOutcome, IntentRunError> {
        let result = catalog.run(name, parameters: parameters)
        switch result {
        case .success(let outcome):
            // What the intent wrote is on disk before anyone is told it finished.
            if !DomainRegistry.shared.synchronizeAll(reason: "after intent \(name)") {
                Diagnostics.report(Diagnostic(kind: .callRefused, message: "intent \(name): its changes could not all be saved (a warning said why)"))
            }
            ControlRequestHandlers.emit(
                .intentResult(intent: name, key: nil, value: outcome.value, dialog: outcome.dialog, opensApp: outcome.opensApp))
            var line = "\(name): value=\(outcome.value.map(PlistJSON.encode) ?? "none")"
            if let dialog = outcome.dialog { line += " dialog=\(PlistJSON.quote(dialog))" }
            if outcome.opensApp { line += " (openAppWhenRun: the app would come to the foreground)" }
            if !inProgram { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        case .failure(let error):
            if !inProgram { report(error) }
        }
        return result
    }

    /// The command line's intent, or one intent per line of standard input when it names none; the exit status.
    func runCommandLine(_ arguments: [String]) -> Int32 {
        do {
            if let invocation = try IntentInvocation.parse(arguments) { return status(of: run(invocation.name, parameters: invocation.parameters)) }
        } catch {
            report(error)
            return error.status
        }
        FileHandle.standardError.write(
            Data("Intents: \(catalog.names.joined(separator: ", ")). Type one per line (NAME key=value …); end with ^D.\n".utf8))
        var last = AppIntentRun.Status.done
        while let line = readLine() {
            do {
                guard let invocation = try IntentInvocation.parse(IntentInvocation.words(of: line)) else { continue }
                let status = status(of: run(invocation.name, parameters: invocation.parameters))
                if status != AppIntentRun.Status.done { last = status }
            } catch {
                report(error)
                last = error.status
            }
        }
        return last
    }

    private func status(of result: Result<IntentOutcome, IntentRunError>) -> Int32 {
        if case .failure(let error) = result { error.status } else { AppIntentRun.Status.done }
    }

    /// A failure: an `error` event and a line on standard error.
    private func report(_ error: IntentRunError) {
        ControlRequestHandlers.emit(.error(message: error.description))
        let program = CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent } ?? "intent"
        FileHandle.standardError.write(Data("\(program): \(error)\n".utf8))
    }
}
