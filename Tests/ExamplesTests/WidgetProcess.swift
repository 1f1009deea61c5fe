import AppProtocol
import Foundation
import PropertyList
import TestSupport

/// How long a widget test waits for an event: only a hang takes this long.
let widgetWait: TimeInterval = 90

/// `settings-examples COMMAND…` as the example app's widget target, through `groupsim exec`, driven over its channel.
func startWidget(_ root: TemporaryRoot, _ command: [String], environment: [String: String] = [:]) throws -> AppProcess {
    try AppProcess(
        controlling: [
            BuiltExecutable.path("groupsim"), "exec", "--app", "com.example.notes", "--target", "widget", "--",
            BuiltExecutable.path("settings-examples"),
        ] + command, root: root, environment: environment)
}

/// The next render for `reason`: its card and the entry it shows.
func render(_ widget: AppProcess, _ reason: String) throws -> (card: [String: PlistValue?], entry: RenderedEntry?) {
    let event = try widget.event(timeout: widgetWait) { if case .render(_, reason, _) = $0 { true } else { false } }
    guard case .render(let lines, _, let entry) = event else { throw TestFailure("not a render: \(event)") }
    var card: [String: PlistValue?] = [:]
    for line in lines { card.updateValue(line.value, forKey: line.key) }
    return (card, entry)
}
