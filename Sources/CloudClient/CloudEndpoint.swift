import CloudModel
import GroupDefaults
import SharedFiles

/// Who may talk to a root's cloud: whoever can read the root. Every HTTP
/// request carries the root's control secret (`<root>/cloud/control.secret`,
/// made by the cloud when it starts); a device's WebSocket carries the
/// device's own secret (`devices/<device>/cloud/device.secret`, made with its
/// cloud settings) and its name. Both are files of mode 0600 read through the
/// root's real folders only (docs/cloud.md, "Security").
/// Here, the control secret as a client reads it; the cloud's checks are CloudService's extension.
package enum CloudTrust {
    /// `<root>/cloud/control.secret`, which the cloud makes when it starts.
    package static func controlSecretFile(root: SimulationRoot) throws -> SecretFile {
        SecretFile(folder: try root.confinedFolder(root.path + "/cloud"), name: "control.secret")
    }

    /// The root's control secret; a clear error when the cloud never made one.
    package static func controlSecret(root: SimulationRoot) throws -> String {
        let file = try controlSecretFile(root: root)
        guard let secret = try file.read() else {
            throw CloudFormatError(
                "\(file.path) does not exist: the cloud makes it when it starts (`groupsim cloud serve` or `groupsim cloud start`)")
        }
        return secret
    }
}

/// Where the cloud listens and the secret that opens its HTTP face: what
/// the CLI, the scenario runner and tests need to ask it anything.
package struct CloudEndpoint: Sendable {
    package let location: ServerLocation
    package let secret: String

    package init(location: ServerLocation, secret: String) {
        self.location = location
        self.secret = secret
    }

    /// The root's cloud with its control secret; nil when the cloud never started.
    package static func control(root: SimulationRoot) throws -> CloudEndpoint? {
        guard let location = try ServerLocation.read(root: root) else { return nil }
        return CloudEndpoint(location: location, secret: try CloudTrust.controlSecret(root: root))
    }

    package var url: String { location.url }
}
