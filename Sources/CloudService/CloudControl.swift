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
        let skew = DeviceCloudSettings.maximumClockSkewMilliseconds
        // What each change that takes a number accepts, in the words that explain it.
        let ranges: [String: (range: ClosedRange<Int64>, unit: String)] = [
            "latency": (0...600_000, "ms"), "drop-pushes": (0...1_000_000, "pushes"), "duplicate-pushes": (0...1_000_000, "pushes"),
            "skew": (-skew...skew, "ms (ten years either way)"),
        ]
        switch (word, amount) {
        case ("online", nil): self = .online
        case ("offline", nil): self = .offline
        case ("partition", nil): self = .partition
        case ("heal", nil): self = .heal
        case ("latency", let ms?) where ranges["latency"]!.range.contains(ms): self = .latency(milliseconds: ms)
        case ("drop-pushes", let n?) where ranges["drop-pushes"]!.range.contains(n): self = .dropPushes(n)
        case ("duplicate-pushes", let n?) where ranges["duplicate-pushes"]!.range.contains(n): self = .duplicatePushes(n)
        case ("skew", let ms?) where ranges["skew"]!.range.contains(ms): self = .skew(milliseconds: ms)
        case (_, let amount):
            if let (range, unit) = ranges[word] {
                let allowed = "from \(range.lowerBound) to \(range.upperBound) \(unit)"
                let usage = "\(word) \(word.hasSuffix("pushes") ? "N" : "MS")"
                throw CloudFormatError(amount.map { "\(word) takes a number \(allowed), found \($0)" } ?? "\(word) needs a number: \(usage), \(allowed)")
            }
            if ["online", "offline", "partition", "heal"].contains(word) {
                throw CloudFormatError("\(word) takes no number (found \(amount!))")
            }
            throw CloudFormatError("'\(word)' is not a network change; use one of \(Self.words)")
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
        guard let location = try ServerLocation.read(root: root) else {
            throw CloudFormatError("the cloud is not started in \(root.path), so it has no faults to set; start it with `groupsim cloud serve`")
        }
        let path = CloudClient.Path.faults(device)
        _ = try CloudClient.blocking { try await CloudClient.request(location, path: path, body: .dictionary(fields)) }
    }
}
