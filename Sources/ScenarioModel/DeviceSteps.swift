import AppModel
import Foundation
import PropertyList
import SimulationValues
import SpecFormat

extension StepGrammar {
    // MARK: Devices

    static let deviceSteps: [StepSpec] = [
        StepSpec(
            "erase-device", shorthand: "a device name", does: "erases every container and preference on it (processes keep running)",
            examples: ["iPad"]
        ) { input in
            let device = try input.device()
            return (.eraseDevice(device), "erase \(device)")
        } write: {
            guard case .eraseDevice(let device) = $0 else { return nil }
            return .scalar(device)
        },
        StepSpec(
            "managed",
            fields: [
                .optional("device", .device), .optional("app", .text, "a bundle id of the app's targets"),
                .optional("suite", .text, "instead of `app`: an app group of the app's targets, whose suite's domain is managed"),
                .optional("key"), .optional("value", .value, "with `key`: forces it"), .optional("remove", .text, "a key: no longer forced"),
                .optional("config", .mapping, "the managed app configuration, whole (an app's only)"),
            ],
            does: "an administrator (MDM) changes the managed preferences of an app's domain, or of an app group's (`suite`), on the "
                + "device (`groupsim device managed`): exactly one of `app` or `suite`, and one of `key` with `value`, `remove` or "
                + "`config`; running processes whose instances read that domain see it at once",
            examples: [
                "{ app: com.example.notes, key: theme, value: dark }", "{ device: iPad, app: com.example.notes.widget, remove: theme }",
                "{ app: com.example.notes, config: { on: \"off\", seats: 5, server: \"https://mdm.example.com\" } }",
                "{ suite: group.com.example.notes, key: theme, value: [1, { a: b }] }",
                "{ device: iPad, suite: group.com.example.notes, remove: theme }",
            ],
            read: ScenarioParser.readManaged, write: ScenarioParser.writeManaged),
        StepSpec(
            "reboot", shorthand: "a device name",
            fields: [
                .optional("device", .device),
                .optional("protection", .text, "until-first-unlock (default, iOS's) or none (the protection switched off)"),
            ],
            does: "the device restarts (the scenario's processes running on it end, saving what they wrote) and stays locked until "
                + "`unlock`: a process launched meanwhile (any role) reads its preferences "
                + "as absent and keeps that view until relaunched; what it writes replaces the user's values of those keys (`groupsim device reboot`)",
            examples: ["iPhone", "{ device: iPad, protection: none }", "{ protection: until-first-unlock }"],
            read: ScenarioParser.readReboot
        ) {
            guard case .reboot(let device, let protection) = $0 else { return nil }
            return .mapping([device.map { ("device", YAMLText.scalar($0)) }, ("protection", protection.rawValue)])
        },
        StepSpec(
            "unlock", shorthand: "a device name", fields: [.optional("device", .device)],
            does: "the person's first unlock after a reboot: processes opening their preferences from now on read them; "
                + "an app waiting for protected data (manifest `protected-data: wait-for-unlock`) goes on (`groupsim device unlock`)",
            examples: ["iPad", "{ device: iPad }", "{}"]
        ) { input in
            let device = input.isScalar ? try input.device() : try input.fields().device("device")
            return (.unlock(device: device), "unlock " + (device ?? "the device"))
        } write: {
            guard case .unlock(let device) = $0 else { return nil }
            return .mapping([device.map { ("device", YAMLText.scalar($0)) }])
        },
        StepSpec(
            "prewarm", shorthand: "a process name (a built-in role)",
            does: "the system launches it ahead of time (`--prewarm`; its ready info says `launch: prewarm`), maybe before the first unlock; "
                + "nothing waits for it to come up (`wait: { for: ready }` does)",
            examples: ["app"]
        ) { input in
            let process = try input.process()
            if input.context.processes[process]?.executable != nil {
                throw input.body.error("prewarm launches a built-in role; '\(process)' runs an exec: executable (launch it instead)")
            }
            return (.prewarm(process), "prewarm \(process)")
        } write: {
            guard case .prewarm(let process) = $0 else { return nil }
            return .scalar(process)
        },
        StepSpec(
            "advance-clock", shorthand: "a duration (the default device)",
            fields: [.optional("device", .device), .required("by", .text, "a duration: 30s, 90m, 6h, 1d; at most 366d")],
            does: "moves the device's simulated clock forward at once (no waiting), as every process of the device sees it; "
                + "a reload deferred past a widget's daily budget comes when the clock reaches the next day, "
                + "and an iCloud upload held for the device's upload interval goes once the interval has passed on it",
            examples: ["6h", "{ device: iPad, by: 90m }", "{ by: 1d }", "{ by: 45s }"],
            read: ScenarioParser.readAdvanceClock
        ) {
            guard case .advanceClock(let device, let seconds) = $0 else { return nil }
            return .mapping([device.map { ("device", YAMLText.scalar($0)) }, ("by", YAMLText.scalar(YAMLText.duration(seconds)))])
        },
    ]
}

extension ScenarioParser {
    @Sendable static func readReboot(_ input: StepInput) throws -> (Step.Action, String) {
        if input.isScalar {
            let device = try input.device()
            return (.reboot(device: device, protection: .untilFirstUnlock), "reboot \(device)")
        }
        let fields = try input.fields()
        let device = try fields.device("device")
        var protection = DataProtection.untilFirstUnlock
        if let node = fields["protection"] {
            let name = try node.string()
            guard let chosen = DataProtection(rawValue: name) else {
                throw node.error("protection must be \(DataProtection.allCases.map(\.rawValue).joined(separator: " or ")), found '\(name)'")
            }
            protection = chosen
        }
        return (.reboot(device: device, protection: protection), "reboot " + (device ?? "the device") + " (data protection \(protection.rawValue))")
    }

    /// The `managed` step: an administrator's change of the managed preferences of an app's domain (`app:`), or of an
    /// app group's suite (`suite:`), each of the app's targets'.
    @Sendable static func readManaged(_ input: StepInput) throws -> (Step.Action, String) {
        let fields = try input.fields()
        // Managed preferences are per domain: an app's, or an app group's suite (forced beside the apps that read it).
        let targets = input.context.app.targets.values
        let isSuite = fields["suite"] != nil
        guard isSuite != (fields["app"] != nil) else {
            throw input.body.error("managed takes exactly one of app (a bundle id) or suite (an app group)")
        }
        let domainNode = fields.node(isSuite ? "suite" : "app")
        let domain = try domainNode.string()
        let known = Set(isSuite ? targets.flatMap(\.appGroups) : targets.map(\.bundleIdentifier)).sorted()
        guard known.contains(domain) else {
            var message = "'\(domain)' is not \(isSuite ? "an app group" : "a bundle id") of the app's targets"
            if let guess = NameSuggestion.closest(to: domain, among: known) { message += "; did you mean \(guess)?" }
            throw domainNode.error(message + " (they are: \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
        }
        if isSuite, let config = fields["config"] {
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
            .managed(device: device, app: domain, change, suite: isSuite), "\(change.summary) for \(domain)" + (device.map { " on \($0)" } ?? "")
        )
    }

    @Sendable static func writeManaged(_ action: Step.Action) -> StepSpec.Written? {
        guard case .managed(let device, let app, let change, let suite) = action else { return nil }
        let what: [(String, String)] =
            switch change {
            case .set(let key, let value): [("key", YAMLText.scalar(key)), ("value", YAMLText.value(value))]
            case .remove(let key): [("remove", YAMLText.scalar(key))]
            case .configuration(let configuration): [("config", YAMLText.value(.dictionary(configuration)))]
            }
        return .mapping([device.map { ("device", YAMLText.scalar($0)) }, (suite ? "suite" : "app", YAMLText.scalar(app))] + what)
    }

    @Sendable static func readAdvanceClock(_ input: StepInput) throws -> (Step.Action, String) {
        var (device, byNode): (String?, SpecNode) = (nil, input.body)
        if !input.isScalar {
            let fields = try input.fields()
            (device, byNode) = (try fields.device("device"), fields.node("by"))
        }
        let text = try byNode.string()
        guard let seconds = SimulatedDuration.parse(text), seconds > 0, seconds <= SimulatedDuration.longestAdvance else {
            throw byNode.error(SimulatedDuration.error(text, what: "advance-clock's 'by'"))
        }
        return (.advanceClock(device: device, seconds: seconds), "advance the clock by \(text)" + (device.map { " on \($0)" } ?? ""))
    }
}
