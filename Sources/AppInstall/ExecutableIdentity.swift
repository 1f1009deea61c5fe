import AppModel
import AppProtocol
import DeviceState
import Foundation
import GroupDefaults
import SimulationValues

/// Who a user's own executable is when it runs as one target (app, widget,
/// intent extension) of an installed app on a simulated device: its process
/// identity and iCloud key-value store entitlement, given to it in the
/// environment that SimulatedFoundation reads. `groupsim exec`, the scenario
/// runner's `exec:` processes and the testing library all start executables
/// with it, so the three agree on what an executable is told.
package struct ExecutableIdentity: Sendable, Equatable {
    package let identity: ProcessIdentity
    /// The target's iCloud key-value store identifier (nil: no entitlement).
    package let keyValueStore: String?
    /// The app's widget target (bundle id, daily reload budget; nil: unlimited), for `WidgetCenter`; nil: it has none.
    package var widget: (bundle: String, reloadBudget: Int?)? {
        get { widgetBundle.map { ($0, widgetReloadBudget) } }
        set {
            widgetBundle = newValue?.bundle
            widgetReloadBudget = newValue?.reloadBudget
        }
    }
    private var widgetBundle: String?
    private var widgetReloadBudget: Int?
    /// The system launched it (a background fetch, a push), or it is the intent extension: its widget reloads count against the budget.
    package var launchedInBackground = false

    /// Read by SimulatedFoundation's `NSUbiquitousKeyValueStore.default`.
    package static let keyValueStoreVariable = SimulationEnvironment.Name.keyValueStore

    /// Every variable a starter of an executable sets itself (`SimulationEnvironment.Name.startersVariables`).
    package static let startersVariables = SimulationEnvironment.Name.startersVariables

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package init(identity: ProcessIdentity, keyValueStore: String?) {
        self.identity = identity
        self.keyValueStore = keyValueStore
    }

    /// The variables to set (and to clear: a nil value) in the executable's
    /// environment, the control channel's included when one is given. The
    /// executable starts with no signal blocked, as any program does, even
    /// when its starter is a `RunningProcess` (whose children start with all
    /// blocked): SimulatedFoundation unblocks them as it loads.
    package func environment(control: ControlChannelAddress? = nil) -> [String: String?] {
        var variables: [String: String?] = identity.environment.mapValues { $0 }
        variables[Self.keyValueStoreVariable] = .some(keyValueStore)
        variables[WidgetEnvironment.bundleVariable] = .some(widgetBundle)
        variables[WidgetEnvironment.budgetVariable] = .some(widgetBundle.map { _ in WidgetEnvironment.budgetText(widgetReloadBudget) })
        variables[WidgetEnvironment.launchVariable] = .some(launchedInBackground ? "background" : nil)
        variables[SimulationEnvironment.Name.unblockSignals] = .some("1")
        switch control {
        case nil: break
        case .socket(let path)?:
            variables[ControlProtocol.channelSocketVariable] = .some(path)
            variables[ControlProtocol.channelDescriptorVariable] = .some(nil)
        case .descriptor(let descriptor)?:
            variables[ControlProtocol.channelDescriptorVariable] = .some(String(descriptor))
            variables[ControlProtocol.channelSocketVariable] = .some(nil)
        }
        return variables
    }

    /// `base` with `environment(control:)` applied.
    package func environment(over base: [String: String], control: ControlChannelAddress? = nil) -> [String: String] {
        var result = base
        for (name, value) in environment(control: control) { result[name] = value }
        return result
    }

    /// The identity of `role` of the app `app` on `device`: from `manifestPath`,
    /// else from the manifest installed on the device. Unknown devices, apps
    /// and targets are refused with what exists instead.
    package static func resolve(root: SimulationRoot, device: String, app: String, role: Role, manifestPath: String?) throws
        -> ExecutableIdentity
    {
        let manifest: AppManifest
        if let manifestPath {
            try requireDevice(root: root, device: device)
            manifest = try AppManifest.load(manifestPath)
            let bundles = manifest.targets.values.map(\.bundleIdentifier)
            guard manifest.targets[.mainApp]?.bundleIdentifier == app || (manifest.targets[.mainApp] == nil && bundles.contains(app)) else {
                throw Failure(description: "\(manifestPath) describes \(bundles.sorted().joined(separator: ", ")), not the app \(app)")
            }
        } else {
            try requireDevice(root: root, device: device)
            let installed = try DeviceManager(root: root).installed(device: device)
            guard let entry = installed.first(where: { $0.bundle == app }) else {
                throw Failure(
                    description: "\(app) is not installed on \(device)"
                        + (installed.isEmpty
                            ? "; install it with groupsim app install --device \(device) --manifest FILE (or pass --manifest)"
                            : "; installed: \(installed.map(\.bundle).joined(separator: ", "))"))
            }
            manifest = entry.manifest
        }
        return try of(role, in: manifest, root: root, device: device)
    }

    /// The identity of `role` of `manifest`'s app on `device` (no check that it is installed).
    package static func of(_ role: Role, in manifest: AppManifest, root: SimulationRoot, device: String) throws -> ExecutableIdentity {
        guard let target = manifest.targets[role] else {
            let roles = manifest.targets.keys.map(\.rawValue).sorted().joined(separator: ", ")
            throw Failure(description: "the app \(manifest.name) has no \(role.rawValue) target; it has: \(roles)")
        }
        var executable = ExecutableIdentity(
            identity: ProcessIdentity(root: root, device: device, bundleIdentifier: target.bundleIdentifier, appGroups: Set(target.appGroups)),
            keyValueStore: target.keyValueStore)
        if let widget = manifest.targets[.widget] {
            executable.widget = (widget.bundleIdentifier, widget.widget.map(\.reloadBudget) ?? WidgetReloadBudget.defaultDailyBudget)
        }
        // Siri and Shortcuts run an intent extension while its app is not in the foreground, the one state in which
        // WidgetKit counts no reload ("Keeping a widget up to date"): its WidgetCenter reloads count against the budget.
        executable.launchedInBackground = role == .intentExtension
        return executable
    }

    private static func requireDevice(root: SimulationRoot, device: String) throws {
        let devicePath = try root.devicePath(device)
        guard FileManager.default.fileExists(atPath: devicePath) else {
            let known = (try? DeviceManager(root: root).list().map(\.name)) ?? []
            throw Failure(
                description: "no device named \(device) in \(root.path)"
                    + (known.isEmpty ? "; create one with groupsim device create \(device)" : "; devices: \(known.joined(separator: ", "))"))
        }
    }
}

/// Where an executable that links SimulatedFoundation serves the control
/// protocol (docs/protocol.md): a Unix socket it connects to, or a connected
/// socket it inherits as a descriptor.
package enum ControlChannelAddress: Sendable, Equatable {
    case socket(String)
    case descriptor(Int32)
}
