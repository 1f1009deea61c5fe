import CloudClient
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import NIOCore
import NIOHTTP1
import PropertyList
import SharedFiles

/// The cloud's side of who may talk to it (the control secret is read in CloudClient's half).
extension CloudTrust {
    /// The largest clock skew a device may have (`groupsim cloud network skew`), in milliseconds.
    static var maximumClockSkewMilliseconds: Int64 { DeviceCloudSettings.maximumClockSkewMilliseconds }

    /// Devices the fault table holds at most.
    static let maximumFaultedDevices = 1024

    /// Splits off the changes stamped further ahead of `now` than any device's
    /// clock may be: such a stamp would win every later write of its key for ever.
    static func refusingFarFuture(_ changes: [UploadedChange], now: Int64) -> (acceptable: [UploadedChange], refused: [RefusedChange]) {
        let latest = now.addingReportingOverflow(maximumClockSkewMilliseconds)
        var acceptable: [UploadedChange] = []
        var refused: [RefusedChange] = []
        for change in changes {
            if !latest.overflow && change.stamp.time > latest.partialValue {
                refused.append(
                    RefusedChange(
                        key: change.key, sequence: change.stamp.sequence,
                        reason:
                            "the change is stamped \(change.stamp.time) ms, more than \(maximumClockSkewMilliseconds) ms (the largest clock skew) "
                            + "ahead of the cloud's clock (\(now) ms)"))
            } else {
                acceptable.append(change)
            }
        }
        return (acceptable, refused)
    }

    /// The header that names the device a WebSocket speaks for.
    static let deviceHeader = "Groupsim-Device"

    /// The secret of a device whose files live on another host, given to
    /// this root's cloud by `groupsim cloud trust`: `<root>/cloud/trusted-devices/<device>.secret`.
    /// A device of the root itself uses its own file instead.
    package static func trustedSecretFile(root: SimulationRoot, device: String) throws -> SecretFile {
        try DomainName.validate(device, what: "device name")
        return SecretFile(folder: try root.confinedFolder(root.path + "/cloud/trusted-devices"), name: device + ".secret")
    }

    /// `Bearer <secret>` of an `Authorization` header, if any.
    static func bearer(_ headers: HTTPHeaders) -> String? {
        guard let value = headers.first(name: "Authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// The cloud's side: the control secret it made, and each device's read when the device connects.
    struct Gate: Sendable {
        let root: SimulationRoot
        let controlSecret: String

        func checkControl(_ head: HTTPRequestHead) throws(CloudServiceError) {
            guard let offered = bearer(head.headers) else {
                throw .noControlSecret(root: root.path)
            }
            guard SecretFile.matches(offered, controlSecret) else {
                throw .wrongControlSecret(root: root.path)
            }
        }

        /// The device a WebSocket upgrade speaks for, once its secret matches the device's file.
        /// Reads a file: call it off the event loop.
        func checkDevice(_ head: HTTPRequestHead) throws(CloudServiceError) -> String {
            guard let device = head.headers.first(name: deviceHeader), !device.isEmpty else {
                throw .deviceNotNamed(header: deviceHeader)
            }
            guard let offered = bearer(head.headers) else {
                throw .noDeviceSecret(device: device)
            }
            let secret: String?
            do {
                try DomainName.validate(device, what: "device name")
                secret = try DeviceCloud(root: root, device: device).secretFile().read() ?? trustedSecretFile(root: root, device: device).read()
            } catch {
                throw .unreadableDevice(device: device, reason: "\(error)")
            }
            guard let secret else {
                throw .unknownDevice(device: device)
            }
            guard SecretFile.matches(offered, secret) else {
                throw .wrongDeviceSecret(device: device)
            }
            return device
        }
    }
}
