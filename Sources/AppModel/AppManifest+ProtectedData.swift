import SpecFormat

extension AppManifest {
    /// `protected-data: trust-reads` (the default, what most apps do): a
    /// process launched before the device's first unlock reads its
    /// preferences at once, as absent. `wait-for-unlock` (the fix): it checks
    /// whether protected data is available and, if not, waits for it before
    /// opening its preferences, as an app waits for
    /// `protectedDataDidBecomeAvailableNotification`.
    package enum ProtectedDataUse: String, Sendable, CaseIterable {
        case trustReads = "trust-reads"
        case waitForUnlock = "wait-for-unlock"
    }

    static func parseProtectedDataUse(_ node: SpecNode) throws -> ProtectedDataUse {
        let text = try node.string()
        guard let use = ProtectedDataUse(rawValue: text) else {
            throw node.error(
                "protected-data must be \(ProtectedDataUse.allCases.map(\.rawValue).joined(separator: " or ")) (what the app does when launched before the first unlock), found '\(text)'"
            )
        }
        return use
    }
}
