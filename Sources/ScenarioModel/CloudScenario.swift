import CloudModel
import Foundation
import PropertyList
import SimulationValues
import SpecFormat

/// A device as a scenario declares it: `- iPad` or `- iPad: {account: alice, clock-skew-ms: 5000, online: false}`.
package struct DeviceSpec: Sendable, Equatable {
    package let name: String
    package var account: String?
    package var clockSkewMilliseconds: Int64 = 0
    package var online = true
    /// The device's platform and preferences cache (docs/apple-traps.md).
    package var settings = DeviceSettings()
    /// `upload-interval-ms`: the agent uploads a store at most once per this many ms (0: at once, the default).
    package var uploadIntervalMilliseconds: Int64 = 0
    /// `writes-before-first-download: kept` (not Apple's rule: the default, `overwritten`, is).
    package var keepsWritesBeforeFirstDownload = false
}

/// A runner step that acts on the cloud, a device's account or its network.
package enum CloudAction: Sendable, Equatable {
    case signIn(device: String, account: String)
    case signOut(device: String)
    case network(device: String, NetworkAction)
    case killCloud
    case restartCloud
    case killAgent(device: String)
    case restartAgent(device: String)
    /// Until every signed-in, online device has uploaded what it can and has every revision the cloud has.
    case waitForQuiescence(timeout: Double)
}

/// A check on the cloud's side of the state.
package enum CloudCheck: Sendable, Equatable {
    /// The cloud's value of a key (Some(nil): absent), and optionally which device's write it is.
    /// `aheadMs`: the winning write's timestamp is at least that far ahead of the real time now
    /// (negative: at least that far behind), as a skewed clock leaves it.
    case cloudValue(store: String, account: String, key: String, value: PlistValue??, writtenBy: String?, aheadMs: Int?)
    /// A device's copy of a store.
    case copyValue(device: String, store: String, key: String, value: PlistValue?)
    /// How many changes a device's agent uploaded (the echo test counts them).
    case uploads(device: String, count: Int)
}

extension ScenarioParser {
    /// The `devices:` list: names, or one-entry mappings with the device's cloud settings.
    static func parseDevices(_ node: SpecNode?) throws -> [DeviceSpec] {
        guard let node else { return [DeviceSpec(name: SimulationEnvironment.defaultDevice)] }
        var devices: [DeviceSpec] = []
        for item in try node.listOrSingle() {
            var spec: DeviceSpec
            if case .mapping = item.node {
                let entries = try item.entries()
                guard entries.count == 1, let (name, body) = entries.first else {
                    throw item.error("a device is a name, or one name with its settings: '- iPad: {account: alice}'")
                }
                spec = DeviceSpec(name: name)
                let fields = try body.fields(allowed: [
                    "account", "clock-skew-ms", "online", "platform", "preferences-cache", "upload-interval-ms", "writes-before-first-download",
                ])
                spec.settings = try parseDeviceSettings(fields)
                spec.account = try fields["account"]?.string()
                if let account = spec.account {
                    do { try DomainName.validate(account, what: "account name") } catch { throw fields["account"]!.error("\(error)") }
                }
                spec.clockSkewMilliseconds = try fields["clock-skew-ms"]?.int64(in: NetworkAction.skewRange) ?? 0
                spec.online = try fields["online"]?.bool() ?? true
                spec.uploadIntervalMilliseconds = try fields["upload-interval-ms"]?.int64(in: NetworkAction.uploadIntervalRange) ?? 0
                if let node = fields["writes-before-first-download"] {
                    switch try node.string() {
                    case "overwritten": spec.keepsWritesBeforeFirstDownload = false
                    case "kept": spec.keepsWritesBeforeFirstDownload = true
                    case let other:
                        throw node.error("writes-before-first-download is 'overwritten' (Apple's rule, the default) or 'kept', not '\(other)'")
                    }
                }
            } else {
                spec = DeviceSpec(name: try item.string())
            }
            do { try DomainName.validate(spec.name, what: "device name") } catch { throw item.error("\(error)") }
            guard !devices.contains(where: { $0.name == spec.name }) else { throw item.error("device '\(spec.name)' is declared twice") }
            devices.append(spec)
        }
        return devices
    }

    /// `platform: tvOS`, `preferences-cache: true`: a device's settings (the cache's default is the platform's).
    static func parseDeviceSettings(_ fields: [String: SpecNode]) throws -> DeviceSettings {
        var platform = DevicePlatform.default
        if let node = fields["platform"] {
            do { platform = try DevicePlatform.named(try node.string()) } catch let error as DefaultsError { throw node.error("\(error)") }
        }
        return DeviceSettings(platform: platform, preferencesCache: try fields["preferences-cache"]?.bool())
    }

}

enum CloudReasons {
    static let all = ExternalChangeReason.allCases.map(\.rawValue)
}

extension SpecNode {
    /// A whole number in a range given in 64 bits (the cloud's bounds), with the node's place in errors.
    func int64(in range: ClosedRange<Int64>) throws -> Int64 {
        Int64(try int(in: Int(range.lowerBound)...Int(range.upperBound)))
    }
}
