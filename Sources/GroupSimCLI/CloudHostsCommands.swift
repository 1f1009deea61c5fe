import ArgumentParser
import CloudClient
import CloudDevice
import CloudModel
import CloudService
import DefaultsCLI
import Foundation
import GroupDefaults
import SharedFiles

/// The two halves of a cloud on another host than its devices
/// (docs/cloud.md, "The cloud across hosts"): the cloud's root trusts a
/// device's secret, and the device's root says where its cloud is.
extension CloudCommand {
    struct Trust: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let a device whose files are on another host sync with this root's cloud, by its secret.",
            discussion: """
                FILE is a copy of the device's devices/NAME/cloud/device.secret from its host (made when it signs in). \
                The cloud checks it on every connection; --remove takes the trust back (the device's next connection is refused).
                """)
        @Option(help: "Simulation root of the cloud.") var root: String?
        @Option(help: "The device's name, as on its own host.") var device: String
        @Option(help: "A copy of the device's secret file.") var secretFile: String?
        @Flag(help: "Stop trusting the device.") var remove = false

        func run() throws {
            let root = SimulationRoot.resolve(explicit: root)
            do { try DomainName.validate(device, what: "device name") } catch { throw ValidationError("\(error)") }
            let trusted = try CloudTrust.trustedSecretFile(root: root, device: device)
            switch (secretFile, remove) {
            case (nil, true):
                print(try trusted.remove() ? "\(device) is no longer trusted" : "\(device) was not trusted")
            case (let path?, false):
                guard !FileManager.default.fileExists(atPath: try root.devicePath(device)) else {
                    throw ValidationError(
                        "\(root.path) has a device named \(device) of its own, and the cloud uses its secret; give the other host's device another name"
                    )
                }
                let text = String(decoding: try readNamedFile(path, limit: 1024), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                guard SecretFile.isSecret(text) else {
                    throw ValidationError(
                        "\(path) does not hold a device secret (64 lowercase hexadecimal digits): copy devices/\(device)/cloud/device.secret from the device's host"
                    )
                }
                try trusted.replace(with: text)
                print("\(device) is trusted by the cloud of \(root.path)")
            default:
                throw ValidationError("give --secret-file FILE (trust the device) or --remove (stop trusting it)")
            }
        }
    }

    struct Server: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "server",
            abstract: "Say which cloud a device syncs with: a URL (a cloud on another host), local (this root's), or show.",
            discussion: """
                The URL is what the cloud's `listening` line prints for other hosts (http://HOST:PORT). Its root must trust \
                the device: `groupsim cloud trust` there, with a copy of this device's devices/NAME/cloud/device.secret. \
                The device's agent reconnects to the new cloud at once.
                """)
        @OptionGroup var location: LocationOptions
        @Argument(help: "http://HOST:PORT, local, or show.") var server: String

        func run() throws {
            let place = try location.simulationRoot
            try place.requireKnownDevice()
            let cloud = DeviceCloud(root: place.root, device: place.device)
            switch server {
            case "show": print(try cloud.readSettings().server?.url ?? "local")
            case "local": try cloud.updateSettings { $0.server = nil }
            default:
                let address: CloudAddress
                do { address = try CloudAddress(url: server) } catch { throw ValidationError(error.description) }
                try cloud.updateSettings { $0.server = address }
                // Made now, so it can be copied to the cloud's host before the agent first connects.
                let secret = try cloud.secretFile()
                _ = try secret.readOrCreate()
                print(
                    "\(place.device) syncs with \(address.url); on the cloud's host: groupsim cloud trust --device \(place.device) --secret-file <a copy of \(secret.path)>"
                )
            }
        }
    }
}
