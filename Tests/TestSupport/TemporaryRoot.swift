import Foundation

/// A fresh simulation root in a temporary folder, removed when released.
public final class TemporaryRoot: @unchecked Sendable {
    public let path: String

    public init() {
        var template = Array(((NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-test-XXXXXX")).utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(errno)")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of a group suite's plist on a device (the layout is part of the product).
    public func groupSuitePath(_ group: String, device: String = "iPhone") -> String {
        "\(path)/devices/\(device)/Containers/Shared/AppGroup/\(group)/Library/Preferences/\(group).plist"
    }

    public func appDomainPath(_ bundle: String, domain: String? = nil, device: String = "iPhone") -> String {
        "\(path)/devices/\(device)/Containers/Data/Application/\(bundle)/Library/Preferences/\(domain ?? bundle).plist"
    }
}
