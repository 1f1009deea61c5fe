import Foundation
import PropertyList

/// Errors of the defaults library, each saying what failed, where, and what to do.
public enum DefaultsError: Error, CustomStringConvertible, Equatable {
    case invalidName(name: String, what: String, problem: String)
    case refusedSuite(name: String, reason: String)
    case refusedDomain(name: String, reason: String)
    case outsideRoot(path: String, root: String)
    case notAPropertyList(key: String, reason: String)
    case notADictionary(domain: String, path: String, found: String)
    case wrongType(key: String, found: String, needed: String)
    case overflow(key: String, current: Int64, delta: Int64)
    case nestedTransaction(domain: String)
    case transactionInsideAnotherDomain(domain: String)
    case badSetting(path: String, key: String, found: String, expected: String)
    case invalidManagedValue(path: String, reason: String)
    case invalidDeviceState(path: String, reason: String)
    case unknownPlatform(name: String)
    case badDeviceSetting(path: String, key: String, found: String, expected: String)

    public var description: String {
        switch self {
        case .invalidName(let name, let what, let problem):
            "invalid \(what) \(Self.show(name)): it \(problem). "
                + (what == "device name"
                    ? "Use a plain name such as iPhone or iPad-2." : "Use a reverse-DNS name such as com.example.app or group.com.example.app.")
        case .refusedSuite(let name, let reason):
            "suite \(Self.show(name)) refused: \(reason)"
        case .refusedDomain(let name, let reason):
            "domain \(Self.show(name)) refused: \(reason)"
        case .outsideRoot(let path, let root):
            "'\(path)' resolves outside the simulation root '\(root)' (a symbolic link?). Nothing is written outside the root: remove the link."
        case .notAPropertyList(let key, let reason):
            "value for key \(Self.show(key)) is not a property list: \(reason)"
        case .notADictionary(let domain, let path, let found):
            "domain \(Self.show(domain)) at '\(path)' holds a \(found), not a dictionary."
        case .wrongType(let key, let found, let needed):
            "key \(Self.show(key)) holds \(found), but this needs \(needed); nothing was changed. Remove the key or write it with the right type first."
        case .overflow(let key, let current, let delta):
            "key \(Self.show(key)): \(current) + \(delta) overflows a 64-bit integer; nothing was changed."
        case .nestedTransaction(let domain):
            "a transaction, increment or synchronize of domain \(Self.show(domain)) was started inside a transaction of the same domain; do that work in the outer transaction's body instead."
        case .transactionInsideAnotherDomain(let domain):
            "a transaction, increment or synchronize of domain \(Self.show(domain)) was started inside a transaction of another domain: holding two domains' locks at once can deadlock with another process; set the values instead (they commit after the transaction), or run the two transactions one after the other."
        case .badSetting(let path, let key, let found, let expected):
            "'\(path)': setting \(Self.show(key)) is \(found), expected \(expected). Set it again (groupsim root \(key) VALUE) or remove the file for the defaults."
        case .invalidManagedValue(let path, let reason):
            "managed preferences '\(path)' not changed: \(reason). Give the configuration as a JSON object."
        case .invalidDeviceState(let path, let reason):
            "device state '\(path)': \(reason). Set it again with groupsim device reboot DEVICE --protection until-first-unlock|none."
        case .unknownPlatform(let name):
            "unknown platform \(Self.show(name)); use one of \(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", "))"
        case .badDeviceSetting(let path, let key, let found, let expected):
            "'\(path)': device setting \(Self.show(key)) is \(found), expected \(expected). Change it with groupsim device settings DEVICE --\(key) VALUE."
        }
    }

    /// The name quoted, with control characters escaped so the message stays one readable line.
    /// - Parameter name: The name.
    /// - Returns: The quoted name.
    public static func show(_ name: String) -> String {
        "\"" + name.unicodeScalars.map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined() + "\""
    }
}
