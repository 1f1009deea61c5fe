import PropertyList

/// One administrator's change of an app's managed preferences (`groupsim
/// device managed`, the scenario step `managed`).
package enum ManagedChange: Equatable, Sendable {
    /// Where MDM puts an app's managed configuration (a dictionary), as
    /// `UserDefaults.standard.dictionary(forKey:)` reads it on iOS.
    package static let configurationKey = "com.apple.configuration.managed"

    /// Forces a key to a value.
    case set(key: String, value: PlistValue)
    /// Stops forcing a key (the app's own value shows again).
    case remove(key: String)
    /// Replaces the managed app configuration (`com.apple.configuration.managed`).
    case configuration([String: PlistValue])

    package func apply(to contents: inout [String: PlistValue]) {
        switch self {
        case .set(let key, let value): contents[key] = value
        case .remove(let key): contents[key] = nil
        case .configuration(let configuration): contents[Self.configurationKey] = .dictionary(configuration)
        }
    }

    /// What it does, for logs and reports.
    package var summary: String {
        switch self {
        case .set(let key, let value): "force \(key) to \(PlistJSON.encode(value))"
        case .remove(let key): "stop forcing \(key)"
        case .configuration(let configuration): "managed configuration \(PlistJSON.encode(.dictionary(configuration)))"
        }
    }
}
