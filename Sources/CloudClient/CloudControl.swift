import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import PropertyList

/// Applies network and clock changes to a device: its own settings file for
/// what the device decides (online, clock), the cloud's fault table for what
/// happens between it and the cloud.
package struct CloudControl: Sendable {
    package let root: SimulationRoot

    package init(root: SimulationRoot) { self.root = root }

    package func apply(_ action: NetworkAction, device: String) throws {
        let cloud = DeviceCloud(root: root, device: device)
        switch action {
        case .online: try cloud.updateSettings { $0.online = true }
        case .offline: try cloud.updateSettings { $0.online = false }
        case .skew(let ms): try cloud.updateSettings { $0.clockSkewMilliseconds = ms }
        case .partition: try setFaults(["partitioned": true], device: device)
        case .heal: try setFaults(["partitioned": false, "latencyMs": 0], device: device)
        case .latency(let ms): try setFaults(["latencyMs": .integer(ms)], device: device)
        case .dropPushes(let n): try setFaults(["dropPushes": .integer(n)], device: device)
        case .duplicatePushes(let n): try setFaults(["duplicatePushes": .integer(n)], device: device)
        case .uploadInterval(let ms): try cloud.updateSettings { $0.uploadIntervalMilliseconds = ms }
        }
    }

    private func setFaults(_ fields: [String: PlistValue], device: String) throws {
        try DomainName.validate(device, what: "device name")
        guard let endpoint = try CloudEndpoint.control(root: root) else {
            throw CloudFormatError("the cloud is not started in \(root.path), so it has no faults to set; start it with `groupsim cloud serve`")
        }
        let path = CloudClient.Path.faults(device)
        _ = try CloudClient.blocking { try await CloudClient.request(endpoint, path: path, body: .dictionary(fields)) }
    }
}
