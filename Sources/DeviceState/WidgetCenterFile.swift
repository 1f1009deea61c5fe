import Foundation
import GroupDefaults
import PropertyList
import SharedFiles

/// The device's WidgetCenter file (`WidgetReloadBudget`'s): a per-device
/// plist of reload requests, one counter per widget bundle id (or "*" for
/// all, or `kind:BUNDLE:KIND` for one kind). Widgets watch it like any other
/// shared file, so a request reaches them across processes.
package struct WidgetCenterFile: Sendable {
    package let root: SimulationRoot
    package let device: String

    package init(root: SimulationRoot, device: String) {
        self.root = root
        self.device = device
    }

    /// The file as a domain of this process, to listen to.
    package func domain() throws -> PersistentDomain {
        try DomainRegistry.shared.domain(
            named: "WidgetCenter", at: try WidgetReloadBudget(root: root, device: device).path, root: root.path)
    }

    /// What a change of the file asks of the widgets of `bundle` showing `kind`:
    /// a reload (`reload-request`), a deferred one delivered (`deferred-reload`), or nothing.
    package static func reason(for change: DomainChange, bundle: String, kind: String?) -> String? {
        let keys = Set(change.changes.map(\.key))
        if keys.contains(bundle) || keys.contains(WidgetReloadBudget.allWidgets) { return "reload-request" }
        if let kind, keys.contains(WidgetReloadBudget.kindKey(bundle, kind: kind)) { return "reload-request" }
        if keys.contains(WidgetReloadBudget.deferredKey(bundle)) { return "deferred-reload" }
        return nil
    }
}

/// What an app's own executable is told of its widget, in its environment
/// (`ExecutableIdentity` sets them from the manifest; SimulatedWidgetKit's
/// `WidgetCenter` reads them): whom its reloads are for, their budget, and
/// whether it was launched in the background (its reloads then count).
package enum WidgetEnvironment {
    /// The app's widget target's bundle id (unset: the app has no widget target).
    package static let bundleVariable = "GROUPSIM_WIDGET_BUNDLE_ID"
    /// Its daily reload budget: a number, or `unlimited`.
    package static let budgetVariable = "GROUPSIM_WIDGET_RELOAD_BUDGET"
    /// `background` when the system launched the process; unset or `foreground`: the person opened it.
    package static let launchVariable = "GROUPSIM_LAUNCH"
    /// The simulator's bound on a timeline provider's answer, in seconds (`GroupSim.runWidget`).
    package static let providerTimeoutVariable = "GROUPSIM_WIDGET_PROVIDER_TIMEOUT"

    package static let unlimited = "unlimited"

    /// The budget as the variable writes it.
    package static func budgetText(_ budget: Int?) -> String { budget.map(String.init) ?? unlimited }

    /// The budget the variable says (nil: unlimited), or an error naming the variable and what it holds.
    package static func budget(_ text: String) throws -> Int? {
        if text == unlimited { return nil }
        guard let number = Int(text), number >= 0 else {
            throw DeviceError(
                "\(budgetVariable)=\(text) is neither a number of reloads (0 or more) nor '\(unlimited)'; it is set from the manifest's reload-budget"
            )
        }
        return number
    }
}
