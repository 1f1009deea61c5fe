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

    /// Why a request is refused: said in the cloud's log only (every 401 reply is the same).
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// The cloud's side: the control secret it made, and each device's read when the device connects.
    struct Gate: Sendable {
        let root: SimulationRoot
        let controlSecret: String

        func checkControl(_ head: HTTPRequestHead) throws(Refusal) {
            guard let offered = bearer(head.headers) else {
                throw Refusal(description: "no control secret: send `Authorization: Bearer $(cat \(root.path)/cloud/control.secret)`")
            }
            guard SecretFile.matches(offered, controlSecret) else {
                throw Refusal(description: "wrong control secret (the root's is in \(root.path)/cloud/control.secret)")
            }
        }

        /// The device a WebSocket upgrade speaks for, once its secret matches the device's file.
        /// Reads a file: call it off the event loop.
        func checkDevice(_ head: HTTPRequestHead) throws(Refusal) -> String {
            guard let device = head.headers.first(name: deviceHeader), !device.isEmpty else {
                throw Refusal(description: "a WebSocket must name its device in the \(deviceHeader) header")
            }
            guard let offered = bearer(head.headers) else {
                throw Refusal(
                    description:
                        "device \(CloudFormatError.brief(device)) sent no secret: send `Authorization: Bearer` with its devices/<device>/cloud/device.secret"
                )
            }
            let secret: String?
            do {
                try DomainName.validate(device, what: "device name")
                secret = try DeviceCloud(root: root, device: device).secretFile().read() ?? trustedSecretFile(root: root, device: device).read()
            } catch {
                throw Refusal(description: "device \(CloudFormatError.brief(device)): \(error)")
            }
            guard let secret else {
                throw Refusal(
                    description: "device \(device) has no secret in this root (it is made when the device signs in; "
                        + "a device on another host needs `groupsim cloud trust --device \(device) --secret-file FILE` here)")
            }
            guard SecretFile.matches(offered, secret) else {
                throw Refusal(description: "wrong secret for device \(device)")
            }
            return device
        }
    }
}
