/// Why `didChangeExternallyNotification` was posted, with Apple's numbers
/// (`NSUbiquitousKeyValueStoreChangeReasonKey`).
package enum ExternalChangeReason: String, Sendable, CaseIterable {
    case serverChange = "server-change"
    case initialSyncChange = "initial-sync-change"
    case quotaViolationChange = "quota-violation-change"
    case accountChange = "account-change"

    package var appleValue: Int {
        switch self {
        case .serverChange: 0
        case .initialSyncChange: 1
        case .quotaViolationChange: 2
        case .accountChange: 3
        }
    }

    /// The name Apple's constant has, e.g. "NSUbiquitousKeyValueStoreServerChange".
    var appleName: String {
        switch self {
        case .serverChange: "NSUbiquitousKeyValueStoreServerChange"
        case .initialSyncChange: "NSUbiquitousKeyValueStoreInitialSyncChange"
        case .quotaViolationChange: "NSUbiquitousKeyValueStoreQuotaViolationChange"
        case .accountChange: "NSUbiquitousKeyValueStoreAccountChange"
        }
    }
}

/// One `didChangeExternallyNotification`: why, and which keys.
package struct ExternalChange: Sendable, Equatable {
    package var reason: ExternalChangeReason
    package var keys: [String]

    package init(reason: ExternalChangeReason, keys: [String]) {
        self.reason = reason
        self.keys = keys
    }
}
