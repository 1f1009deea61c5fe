import AppProtocol
import Foundation
import PropertyList
import SimulationValues
import SpecFormat

/// A simulated app: its targets, their bundle ids and entitlements, their
/// registered defaults, what the widget shows and what each intent does.
package struct AppManifest: Sendable {
    package var name: String
    package var targets: [Role: Target]
    /// The file it came from ("built-in" for the example).
    package var source: String
    /// Where the intents (declared under the intent-extension target) run: `intents:`.
    package var intentsRun: IntentPlacement = .extension
    /// What the app's processes do when launched before the device's first unlock: `protected-data:`.
    package var protectedData: ProtectedDataUse = .trustReads

    /// `intents: extension` runs each intent in the intent extension's own
    /// process; `intents: in-app` in the main app's process (launched in the
    /// background when it is not running), as App Intents in the app target do.
    package enum IntentPlacement: String, Sendable, CaseIterable {
        case `extension`
        case inApp = "in-app"
    }

    /// The app's intents, by name: the intent-extension target's, wherever they run.
    package var intents: [String: Intent] { targets[.intentExtension]?.intents ?? [:] }

    package struct Target: Sendable {
        package var bundleIdentifier: String
        /// The app-group entitlement (com.apple.security.application-groups).
        package var appGroups: [String]
        /// The iCloud key-value store identifier entitlement, if any.
        package var keyValueStore: String?
        /// Mirror prefixed keys between the target's suite and its key-value store.
        package var cloudBridge: CloudBridge?
        /// The suite the target reads and writes: an app group's id, or
        /// "standard" for the app's own domain (the classic mistake when the
        /// group was meant). Defaults to the first app group.
        package var suite: String
        package var registeredDefaults: [String: PlistValue]
        package var widget: Widget?
        package var intents: [String: Intent]

        package var usesStandardDefaults: Bool { suite == "standard" }
    }

    /// `icloud-bridge: fixed` (or `naive`, or `{mode: fixed, prefix: "sync-"}`).
    package struct CloudBridge: Sendable, Equatable {
        package var mode: String
        package var prefix: String
        package static let modes = ["fixed", "naive"]
    }

    package struct Widget: Sendable {
        package enum Timeline: Sendable, Equatable {
            /// Reloads whenever a shown key changes (the app reloading timelines on every write).
            case onChange
            /// Reloads every so many seconds.
            case periodic(seconds: Double)
            /// Reloads only when asked (a stale widget until then).
            case manual
        }
        /// How an on-change timeline hears of changes, as a real widget's code might.
        package enum Observer: String, Sendable, CaseIterable {
            /// Every change of a shown key, from any process (the app reloading timelines on every write).
            case anyChange = "any-change"
            /// Key-value observing of each shown key: a dotted key (or one starting with '@') is
            /// read as Apple's KVO reads a key path, and so is never delivered (`KeyValueObservingPath`).
            case keyValueObserving = "key-value-observing"
            /// `UserDefaults.didChangeNotification`: this process's own changes only, so never the app's.
            case didChangeNotification = "did-change-notification"
        }
        package var shows: [String]
        package var timeline: Timeline
        package var observer: Observer = .anyChange
        /// Reloads the app may ask from the background per simulated day (`reload-budget`); nil: unlimited.
        package var reloadBudget: Int? = WidgetEnvironment.defaultDailyBudget
    }

    package struct Intent: Sendable {
        package enum Action: String, Sendable, CaseIterable { case set, remove, append, increment, toggle }
        package var action: Action
        package var key: String
        /// A fixed value (set, append).
        package var value: PlistValue?
        /// The name of the parameter that supplies the value (`name=value` on the command line).
        package var parameter: String?
        /// The step of `increment`.
        package var by: Int64
    }

    package func target(_ role: Role) throws -> Target {
        guard let target = targets[role] else {
            throw SpecError(file: source, line: 0, column: 0, message: "the app '\(name)' has no \(role.rawValue) target")
        }
        return target
    }

    // MARK: Reading

    /// The keys each part of a manifest takes, as the reader allows them: docs/manifest.md's reference is checked
    /// against these (ManifestDocsTests), so the two cannot drift apart.
    package static let topLevelKeys = ["name", "targets", "intents", "protected-data"]
    package static let targetKeys = ["bundle-id", "app-groups", "icloud-kvs", "icloud-bridge", "suite", "registered-defaults"]
    package static let widgetKeys = ["shows", "timeline", "observer", "reload-budget"]
    package static let intentExtensionKeys = ["intents"]
    package static let intentKeys = Intent.Action.allCases.map(\.rawValue) + ["value", "parameter", "by"]
    package static let cloudBridgeKeys = ["mode", "prefix"]

    package static func parse(_ root: SpecNode) throws -> AppManifest {
        let fields = try root.fields(allowed: topLevelKeys, required: ["name", "targets"])
        var targets: [Role: Target] = [:]
        for (name, node) in try fields["targets"]!.entries(allowed: Role.allCases.map(\.rawValue)) {
            targets[Role(rawValue: name)!] = try parseTarget(node, role: Role(rawValue: name)!)
        }
        var manifest = AppManifest(name: try fields["name"]!.string(), targets: targets, source: root.file)
        if let node = fields["intents"] { manifest.intentsRun = try parseIntentPlacement(node, targets: targets) }
        if let node = fields["protected-data"] { manifest.protectedData = try parseProtectedDataUse(node) }
        return manifest
    }

    static func parseIntentPlacement(_ node: SpecNode, targets: [Role: Target]) throws -> IntentPlacement {
        let text = try node.string()
        guard let placement = IntentPlacement(rawValue: text) else {
            throw node.error(
                "intents must be \(IntentPlacement.allCases.map(\.rawValue).joined(separator: " or ")) (where the app's intents run), found '\(text)'"
            )
        }
        if placement == .inApp, targets[.mainApp] == nil {
            throw node.error("intents: in-app runs the intents in the main app's process; add a main-app target or say intents: extension")
        }
        return placement
    }

    static func parseTarget(_ node: SpecNode, role: Role) throws -> Target {
        var allowed = targetKeys
        if role == .widget { allowed += widgetKeys }
        if role == .intentExtension { allowed += intentExtensionKeys }
        let fields = try node.fields(allowed: allowed, required: ["bundle-id"])
        let bundle = try fields["bundle-id"]!.string()
        do { try DomainName.validate(bundle, what: "bundle identifier") } catch { throw fields["bundle-id"]!.error("\(error)") }
        let groups = try fields["app-groups"]?.strings() ?? []
        for (index, group) in groups.enumerated() where !DomainName.isGroup(group) {
            throw try fields["app-groups"]!.listOrSingle()[index].error("an app-group id starts with 'group.', found '\(group)'")
        }
        let suite = try fields["suite"]?.string() ?? groups.first ?? "standard"
        var widget: Widget? = nil
        if role == .widget {
            widget = Widget(
                shows: try fields["shows"]?.strings() ?? [], timeline: try parseTimeline(fields["timeline"]),
                observer: try parseWidgetObserver(fields["observer"]), reloadBudget: try parseReloadBudget(fields["reload-budget"]))
            if fields["observer"] != nil, widget?.timeline != .onChange {
                throw fields["observer"]!.error("observer chooses how an on-change timeline hears of changes; this timeline is not on-change")
            }
        }
        var intents: [String: Intent] = [:]
        for (name, intentNode) in try fields["intents"]?.entries() ?? [] {
            intents[name] = try parseIntent(intentNode)
        }
        let keyValueStore = try fields["icloud-kvs"]?.string()
        if let store = keyValueStore {
            do { try DomainName.validate(store, what: "iCloud key-value store identifier") } catch { throw fields["icloud-kvs"]!.error("\(error)") }
        }
        var bridge: CloudBridge? = nil
        if let node = fields["icloud-bridge"] {
            bridge = try parseCloudBridge(node)
            if keyValueStore == nil { throw node.error("icloud-bridge needs the icloud-kvs entitlement on the same target") }
        }
        return Target(
            bundleIdentifier: bundle, appGroups: groups, keyValueStore: keyValueStore, cloudBridge: bridge, suite: suite,
            registeredDefaults: try fields["registered-defaults"]?.plistDictionary() ?? [:], widget: widget, intents: intents)
    }

    static func parseCloudBridge(_ node: SpecNode) throws -> CloudBridge {
        var bridge = CloudBridge(mode: "fixed", prefix: "sync-")
        if let mode = try? node.string() {
            bridge.mode = mode
        } else {
            let fields = try node.fields(allowed: cloudBridgeKeys)
            bridge.mode = try fields["mode"]?.string() ?? "fixed"
            bridge.prefix = try fields["prefix"]?.string() ?? "sync-"
            if bridge.prefix.isEmpty { throw fields["prefix"]!.error("the prefix must not be empty (every key would be mirrored)") }
        }
        guard CloudBridge.modes.contains(bridge.mode) else {
            throw node.error("icloud-bridge mode must be \(CloudBridge.modes.joined(separator: " or ")), found '\(bridge.mode)'")
        }
        return bridge
    }

    /// The shortest and longest period of a periodic timeline, in seconds.
    package static let timelinePeriods = 0.1...86_400.0

    static func parseTimeline(_ node: SpecNode?) throws -> Widget.Timeline {
        guard let node else { return .onChange }
        let text = try node.string()
        switch text {
        case "on-change": return .onChange
        case "manual": return .manual
        default:
            // "every 5s"
            let words = text.split(separator: " ")
            if words.count == 2, words[0] == "every", words[1].hasSuffix("s") {
                let number = words[1].dropLast()
                guard let seconds = Double(number), timelinePeriods.contains(seconds) else {
                    let (shortest, longest) = (timelinePeriods.lowerBound, timelinePeriods.upperBound)
                    throw node.error(
                        "'every Ns' needs N from \(String(format: "%g", shortest)) to \(String(format: "%g", longest)) seconds, found '\(number)'")
                }
                return .periodic(seconds: seconds)
            }
            throw node.error("timeline must be on-change, manual or 'every Ns', found '\(text)'")
        }
    }

    /// The largest daily reload budget a manifest may give (Apple's is 40 to 70).
    package static let reloadBudgets = 0...10_000

    static func parseReloadBudget(_ node: SpecNode?) throws -> Int? {
        guard let node else { return WidgetEnvironment.defaultDailyBudget }
        let text = try node.string()
        if text == "unlimited" { return nil }
        guard let budget = Int(text), reloadBudgets.contains(budget) else {
            throw node.error(
                "reload-budget is the reloads a day the app may ask from the background, \(reloadBudgets.lowerBound) to \(reloadBudgets.upperBound), "
                    + "or unlimited; found '\(text)'")
        }
        return budget
    }

    static func parseWidgetObserver(_ node: SpecNode?) throws -> Widget.Observer {
        guard let node else { return .anyChange }
        let text = try node.string()
        guard let observer = Widget.Observer(rawValue: text) else {
            throw node.error("observer must be \(Widget.Observer.allCases.map(\.rawValue).joined(separator: ", ")), found '\(text)'")
        }
        return observer
    }

    static func parseIntent(_ node: SpecNode) throws -> Intent {
        let actions = Intent.Action.allCases.map(\.rawValue)
        let fields = try node.fields(allowed: intentKeys)
        let chosen = actions.filter { fields[$0] != nil }
        guard chosen.count == 1, let action = Intent.Action(rawValue: chosen[0]) else {
            throw node.error(
                "an intent needs exactly one action key (\(actions.joined(separator: ", "))), found \(chosen.isEmpty ? "none" : chosen.joined(separator: ", "))"
            )
        }
        // An appended value becomes an item of the array: one level less is left for it.
        let valueDepth = action == .append ? PlistLimits.maximumDepth - 1 : PlistLimits.maximumDepth
        let intent = Intent(
            action: action, key: try fields[action.rawValue]!.string(), value: try fields["value"]?.plistValue(maximumDepth: valueDepth),
            parameter: try fields["parameter"]?.string(), by: Int64(try fields["by"]?.int() ?? 1))
        if (action == .set || action == .append) && intent.value == nil && intent.parameter == nil {
            throw node.error("'\(action.rawValue)' needs a 'value' or a 'parameter'")
        }
        return intent
    }

    /// The example app the demo uses when no manifest is given.
    package static let example: AppManifest = {
        do { return try parse(SpecNode.parse(exampleYAML, file: "built-in example")) } catch {
            preconditionFailure("the built-in example manifest is invalid: \(error)")
        }
    }()

    package static let exampleYAML = """
        # A notes app with a home-screen widget and a Shortcuts/Siri extension.
        # Every key, its default and what it does: docs/manifest.md.
        name: Notes
        targets:
          main-app:
            bundle-id: com.example.notes
            app-groups: [group.com.example.notes]
            icloud-kvs: com.example.notes
            registered-defaults:
              theme: light
              fontSize: 14
          widget:
            bundle-id: com.example.notes.widget
            app-groups: [group.com.example.notes]
            shows: [theme, noteCount, lastNote]
            timeline: on-change         # or manual, or every 60s
            observer: any-change        # how on-change hears: or key-value-observing, did-change-notification
            reload-budget: 40           # reloads a day asked from the background (default 40), or unlimited
          intent-extension:
            bundle-id: com.example.notes.intents
            app-groups: [group.com.example.notes]
            intents:
              AddNote: { append: notes, parameter: text }
              CountNote: { increment: noteCount, by: 1 }
              SetLastNote: { set: lastNote, parameter: text }
              SetTheme: { set: theme, parameter: theme }
              ClearNotes: { remove: notes }
        """
}
