import AppModel
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
}
