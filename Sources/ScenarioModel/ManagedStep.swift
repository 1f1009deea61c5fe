import AppModel
import GroupDefaults
import SpecFormat

extension ScenarioParser {
    /// The `managed` step: an administrator's change of the managed preferences of an app's domain (`app:`), or of an
    /// app group's suite (`suite:`), each of the app's targets'.
    @Sendable static func readManaged(_ input: StepInput) throws -> (Step.Action, String) {
        let fields = try input.fields()
        // Managed preferences are per domain: an app's, or an app group's suite (forced beside the apps that read it).
        let targets = input.context.app.targets.values
        let isSuite = fields.nodes["suite"] != nil
        guard isSuite != (fields.nodes["app"] != nil) else { throw input.body.error("managed takes exactly one of app (a bundle id) or suite (an app group)") }
        let appNode = fields.node(isSuite ? "suite" : "app")
        let app = try appNode.string()
        let known = Set(isSuite ? targets.flatMap(\.appGroups) : targets.map(\.bundleIdentifier)).sorted()
        guard known.contains(app) else {
            var message = "'\(app)' is not \(isSuite ? "an app group" : "a bundle id") of the app's targets"
            if let guess = DeviceManager.closest(to: app, among: known) { message += "; did you mean \(guess)?" }
            throw appNode.error(message + " (they are: \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
        }
        if isSuite, let config = fields.nodes["config"] {
            throw config.error("config is an app's managed app configuration; a suite takes key with value, or remove")
        }
        let chosen = Set(fields.nodes.keys).subtracting(["device", "app", "suite"])
        let change: ManagedChange
        switch chosen {
        case ["key", "value"]: change = .set(key: try fields.node("key").string(), value: try fields.node("value").plistValue())
        case ["remove"]: change = .remove(key: try fields.node("remove").string())
        case ["config"]: change = .configuration(try fields.node("config").plistDictionary())
        default: throw input.body.error("managed takes an app or a suite and one of: key with value (forces it), remove: KEY, config: {…}")
        }
        let device = try fields.device("device")
        return (
            .managed(device: device, app: app, change, suite: isSuite), "\(change.summary) for \(app)" + (device.map { " on \($0)" } ?? "")
        )
    }
}
