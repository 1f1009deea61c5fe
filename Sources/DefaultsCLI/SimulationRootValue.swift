import AppInstall
import AppModel
import DeviceState
import Foundation
import GroupDefaults

/// The root and device a command acts on, resolved from options and environment.
package struct SimulationRootValue {
    package let root: SimulationRoot
    package let device: String

    package init(root: String?, device: String?) throws {
        self.root = SimulationRoot.resolve(explicit: root)
        self.device = try SimulationRoot.resolveDevice(explicit: device)
    }

    package func files(app: String? = nil) -> DomainFiles { DomainFiles(root: root, device: device, app: app) }

    /// The device named, refused if it does not exist (the default device excepted): see `DeviceManager.requireDevice`.
    package func requireKnownDevice() throws { try DeviceManager(root: root).requireDevice(device) }

    /// The path of an app's (or, for `group.…`, an app group's) container on
    /// the device, refused with the likely one meant when it does not exist
    /// and nothing installed uses it: a typo must not make a container.
    package func requireKnownContainer(_ identifier: String) throws -> String {
        let isGroup = DomainName.isGroup(identifier)
        let path =
            isGroup
            ? try root.groupContainerPath(device: device, groupIdentifier: identifier)
            : try root.appContainerPath(device: device, bundleIdentifier: identifier)
        if FileManager.default.fileExists(atPath: path) { return path }
        let installed = try DeviceManager(root: root).installed(device: device).flatMap { $0.manifest.targets.values }
        let known = isGroup ? Set(installed.flatMap(\.appGroups)) : Set(installed.map(\.bundleIdentifier))
        guard known.contains(identifier) else {
            var message = "no \(isGroup ? "app group" : "app") \(identifier) on \(device): nothing installed there uses it"
            if let guess = NameSuggestion.closest(to: identifier, among: known.sorted()) { message += "; did you mean \(guess)?" }
            if !known.isEmpty { message += " (\(isGroup ? "app groups" : "apps") there: \(known.sorted().joined(separator: ", ")))" }
            throw DeviceError(message + " (install its app: groupsim app install --device \(device) [--manifest FILE])")
        }
        return path
    }
}
