import CloudModel

/// What the cloud refuses or does not have: an account or store a path names
/// (answered 404), a request whose secret does not match (answered 401, the
/// reason said in the cloud's log only). `description` is the one place
/// these become text.
enum CloudServiceError: Error, CustomStringConvertible, Equatable {
    case noAccount(name: String)
    /// Nothing was uploaded to the store.
    case noStore(identifier: String, account: String)
    /// A control request without `Authorization: Bearer`; `root`: where its secret is.
    case noControlSecret(root: String)
    case wrongControlSecret(root: String)
    /// A WebSocket that does not name its device in `header`.
    case deviceNotNamed(header: String)
    case noDeviceSecret(device: String)
    /// The device's name or secret file could not be read: `reason`.
    case unreadableDevice(device: String, reason: String)
    /// A device whose secret this root does not have.
    case unknownDevice(device: String)
    case wrongDeviceSecret(device: String)

    /// Whether the cloud answers this with 404 (what a path names, missing).
    var isNotFound: Bool {
        switch self {
        case .noAccount, .noStore: true
        default: false
        }
    }

    var description: String {
        switch self {
        case .noAccount(let name): "the cloud has no account \(name)"
        case .noStore(let identifier, let account): "account \(account) has no store \(identifier) in the cloud (nothing was uploaded to it)"
        case .noControlSecret(let root): "no control secret: send `Authorization: Bearer $(cat \(root)/cloud/control.secret)`"
        case .wrongControlSecret(let root): "wrong control secret (the root's is in \(root)/cloud/control.secret)"
        case .deviceNotNamed(let header): "a WebSocket must name its device in the \(header) header"
        case .noDeviceSecret(let device):
            "device \(CloudFormatError.brief(device)) sent no secret: send `Authorization: Bearer` with its devices/<device>/cloud/device.secret"
        case .unreadableDevice(let device, let reason): "device \(CloudFormatError.brief(device)): \(reason)"
        case .unknownDevice(let device):
            "device \(device) has no secret in this root (it is made when the device signs in; "
                + "a device on another host needs `groupsim cloud trust --device \(device) --secret-file FILE` here)"
        case .wrongDeviceSecret(let device): "wrong secret for device \(device)"
        }
    }
}
