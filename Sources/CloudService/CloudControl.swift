import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import PropertyList

/// One change to a device's network or clock.
public enum NetworkAction: Sendable, Equatable {
    case online, offline, partition, heal
    case latency(milliseconds: Int64)
    case dropPushes(Int64)
    case duplicatePushes(Int64)
    case skew(milliseconds: Int64)

    public static let words = "online, offline, latency MS, partition, heal, drop-pushes N, duplicate-pushes N, skew MS"

    public init(_ word: String, _ amount: Int64?) throws {
        switch (word, amount) {
        case ("online", nil): self = .online
        case ("offline", nil): self = .offline
        case ("partition", nil): self = .partition
        case ("heal", nil): self = .heal
        case ("latency", let ms?) where (0...600_000).contains(ms): self = .latency(milliseconds: ms)
        case ("drop-pushes", let n?) where (0...1_000_000).contains(n): self = .dropPushes(n)
        case ("duplicate-pushes", let n?) where (0...1_000_000).contains(n): self = .duplicatePushes(n)
        case ("skew", let ms?) where ms >= -CloudTrust.maximumClockSkewMilliseconds && ms <= CloudTrust.maximumClockSkewMilliseconds: self = .skew(milliseconds: ms)
        default:
            throw CloudFormatError("'\(word)\(amount.map { " \($0)" } ?? "")' is not a network change; use one of \(Self.words) "
                + "(latency 0–600000 ms, counts 0–1000000, skew within ±10 years in ms)")
        }
    }
}

/// Applies network and clock changes to a device: its own settings file for
/// what the device decides (online, clock), the cloud's fault table for what
/// happens between it and the cloud.
public struct CloudControl: Sendable {
    public let root: SimulationRoot

    public init(root: SimulationRoot) { self.root = root }

    public func apply(_ action: NetworkAction, device: String) throws {
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
