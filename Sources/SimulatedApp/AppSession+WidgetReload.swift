import AppModel
import AppProtocol
import DeviceState
import Foundation

extension AppSession {
    /// `WidgetCenter.reloadAllTimelines()`: free while the app is in the
    /// foreground; from the background it counts against the widget's daily
    /// budget, and past it the reload waits for the next simulated day (said
    /// as a `widget-reload-deferred` warning, as the system says nothing).
    func requestWidgetReload() throws {
        let widget = manifest.targets[.widget]
        let outcome = try WidgetReloadBudget(root: context.root, device: context.device).request(
            widget: widget?.bundleIdentifier, budget: widget?.widget?.reloadBudget, inForeground: !launchedInBackground)
        guard case .deferred(let counters) = outcome, let widget else { return }
        events.emit(
            .warning(
                kind: "widget-reload-deferred",
                message:
                    "the reload of \(widget.bundleIdentifier) was deferred: its budget of \(counters.used) reloads for \(DeviceClock.dayText(counters.day)) "
                    + "is spent (\(counters.deferred) deferred); it comes when the device's clock reaches the next day"))
    }
}
