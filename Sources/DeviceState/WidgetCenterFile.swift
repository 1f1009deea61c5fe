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
