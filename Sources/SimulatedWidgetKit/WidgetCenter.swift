import AppProtocol
import DeviceState
import Foundation
import GroupDefaults
import SimulatedFoundation
import SimulationValues

/// Reloads widget timelines and lists the widgets on the device.
/// Apple: https://developer.apple.com/documentation/widgetkit/widgetcenter
///
/// A reload is a request through the device's WidgetCenter file, which the
/// widgets' processes watch: from an app launched in the background it
/// counts against its widget's daily budget, and past it waits for the
/// device's next day (a `widget-reload-deferred` warning says so, where the
/// system says nothing); from the foreground it is free (docs/apple-traps.md,
/// "Widget reload budget"). Whom it is for, the budget and the launch come
/// from the environment `groupsim exec` sets (`ExecutableIdentity`).
/// Unchecked Sendable: it holds nothing but the environment it read, once.
public final class WidgetCenter: @unchecked Sendable {
    public static let shared = WidgetCenter()

    private let environment: [String: String]
    private let process: SimulatedProcess

    private init() {
        environment = SimulationEnvironment.current.values
        process = .current
    }

    /// Asks the widgets of `kind` of this app to ask their providers for a new timeline.
    /// - Parameter kind: The widgets' kind.
    public func reloadTimelines(ofKind kind: String) { reportingFailure(kind: kind) }

    /// Asks every widget of this app to ask its provider for a new timeline.
    public func reloadAllTimelines() { reportingFailure(kind: nil) }

    /// The widgets of this app running on the device (`GroupSim.runWidget`'s processes).
    /// - Parameter completion: Called with the widgets, or the error `currentConfigurations()` throws.
    @preconcurrency public func getCurrentConfigurations(_ completion: @escaping @Sendable (Result<[WidgetInfo], any Error>) -> Void) {
        completion(Result { try self.running() })
    }

    /// The widgets of this app running on the device.
    /// - Throws: An error saying what could not be read: the app's widget settings in the environment, or the device's list of running widgets.
    /// - Returns: The widgets; empty when the app has no widget target.
    public func currentConfigurations() async throws -> [WidgetInfo] { try running() }

    // MARK: Behind the requests

    /// The app's widget target (from the environment), or nil when it has none.
    private func widget() throws -> (bundle: String, budget: Int?)? {
        guard let bundle = environment[WidgetEnvironment.bundleVariable], !bundle.isEmpty else { return nil }
        let budget = try environment[WidgetEnvironment.budgetVariable].map(WidgetEnvironment.budget) ?? WidgetReloadBudget.defaultDailyBudget
        return (bundle, budget)
    }

    private var launchedInBackground: Bool { environment[WidgetEnvironment.launchVariable] == "background" }

    /// Apple's calls return nothing: a request that could not be made is said where warnings go.
    private func reportingFailure(kind: String?) {
        do { try request(kind: kind) } catch {
            Diagnostics.report(Diagnostic(kind: .widgetCenter, message: "\(error)"))
        }
    }

    private static func asked(_ kind: String?) -> String {
        "WidgetCenter.shared." + (kind.map { "reloadTimelines(ofKind: \"\($0)\")" } ?? "reloadAllTimelines()")
    }

    /// The request itself; a deferred one is said as a `widget-reload-deferred` warning.
    func request(kind: String?) throws {
        let identity = process.identity
        // What the process wrote before asking is what the widget must read: on a device the widget asks cfprefsd,
        // which already holds it; here the process's writes are saved first (a commit may still be queued).
        _ = DomainRegistry.shared.synchronizeAll(reason: "before \(Self.asked(kind))", skippingUnchangedSinceLastSave: true)
        let widget: (bundle: String, budget: Int?)?
        let outcome: WidgetReloadBudget.Outcome
        do {
            widget = try self.widget()
            outcome = try WidgetReloadBudget(root: identity.root, device: identity.device).request(
                widget: widget?.bundle, kind: kind, budget: widget?.budget, inForeground: !launchedInBackground)
        } catch {
            throw DeviceError("\(Self.asked(kind)) was not delivered to the widgets of \(identity.device): \(error)")
        }
        guard case .deferred(let counters) = outcome, let widget else { return }
        Diagnostics.report(
            Diagnostic(
                kind: .widgetReloadDeferred,
                message: "\(Self.asked(kind)) of \(widget.bundle) was deferred: its budget of \(counters.used) reloads for "
                    + "\(DeviceClock.dayText(counters.day)) is spent (\(counters.deferred) deferred); it comes when the device's clock reaches the next day"
            ))
    }

    private func running() throws -> [WidgetInfo] {
        guard let widget = try widget() else { return [] }
        let identity = process.identity
        return try RunningWidgets(root: identity.root, device: identity.device).running(bundle: widget.bundle).map { running in
            WidgetInfo(
                kind: running.kind, family: WidgetFamily.allCases.first { $0.name == running.family } ?? .systemSmall,
                configuration: running.configuration)
        }
    }
}

/// A widget on the device: its kind and family.
/// Apple: https://developer.apple.com/documentation/widgetkit/widgetinfo
public struct WidgetInfo: Sendable, Hashable {
    /// The string given to the widget's configuration (`GroupSim.runWidget`'s `kind`).
    public let kind: String
    /// The widget's size class.
    public let family: WidgetFamily
    /// A configurable widget's intent, by type name, and its parameters as given (`widgetConfigurationIntent(of:)`).
    let configuration: RunningWidgets.Entry.Configuration?
}

/// Run at load: a program that links this module answers `reload-widgets`
/// on its control channel (a scenario's step, a test's request) as its own
/// `WidgetCenter.shared.reloadAllTimelines()` would, from its launch's
/// foreground or background. Nothing else happens at load.
@used @section(".init_array")
private let answerReloadWidgetsAtLoad: @convention(c) () -> Void = {
    ControlRequestHandlers.install(.reloadWidgets) { _ in
        try WidgetCenter.shared.request(kind: nil)
        return .done
    }
}
