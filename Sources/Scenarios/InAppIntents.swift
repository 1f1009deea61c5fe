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
    func performIntentInApp(_ name: String, parameters: [String: String], in host: String, result: PlistValue??, step: Step) throws {
        if !isRunning(host) { try launch(host, backgroundReason: "to run intent \(name)") }
        let key = context.scenario.app.intents[name]?.key
        context.log.record(
            process: host, kind: .action, name: "intent", fields: key.map { ["key": .string($0)] } ?? [:],
            text: step.summary + " (in the app's process)")
        let answer = try driver(host).request(.performIntent(name: name, parameters: parameters), timeout: RunnerTimeouts.request)
        try checkIntentResult(name, expected: result, reported: .some(answer.response?.value))
    }
}
