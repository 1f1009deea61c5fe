import Foundation
import GroupDefaults
import PropertyList

/// A fresh simulation root in a temporary folder, removed when released.
package final class TemporaryRoot: Sendable {
    package let path: String

    package init() {
        var template = Array(((NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-test-XXXXXX")).utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(errno)")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    deinit {
        // A domain of this process still saving into the root would make its
        // folders again after the removal: let every such save end first.
        for domain in DomainRegistry.shared.openDomains where domain.file.path.hasPrefix(path + "/") { try? domain.synchronize() }
        PersistentDomain.waitForReleasedCommits()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of a group suite's plist on a device (the layout is part of the product).
    package func groupSuitePath(_ group: String, device: String = "iPhone") -> String {
        "\(path)/devices/\(device)/Containers/Shared/AppGroup/\(group)/Library/Preferences/\(group).plist"
    }

    package func appDomainPath(_ bundle: String, domain: String? = nil, device: String = "iPhone") -> String {
        "\(path)/devices/\(device)/Containers/Data/Application/\(bundle)/Library/Preferences/\(domain ?? bundle).plist"
    }
}

extension TemporaryRoot {
    /// Makes `device` (default iPhone) a device with `settings`: its `device.plist`, as `groupsim device create` writes it.
    package func makeDevice(_ settings: DeviceSettings, device: String = "iPhone") throws {
        let folder = "\(path)/devices/\(device)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(PropertyListFormat.binary.encode(.dictionary(settings.metadata))).write(to: URL(fileURLWithPath: folder + "/device.plist"))
    }

    /// Sets the root's durability as a user does, with `groupsim root durability`,
    /// and checks that the root now says so.
    public func setDurability(_ durability: Durability) throws {
        let set = try groupsim(["root", "durability", durability.rawValue], root: self)
        let shown = try groupsim(["root", "durability"], root: self)
        guard set.status == 0, shown.trimmedOutput == durability.rawValue else {
            throw DurabilityNotSet(
                description:
                    "groupsim root durability \(durability.rawValue): status \(set.status), \(set.stderr); then it printed '\(shown.trimmedOutput)' \(shown.stderr)"
            )
        }
    }
}

/// `groupsim root durability` did not set what was asked.
public struct DurabilityNotSet: Error, CustomStringConvertible {
    public let description: String
}
