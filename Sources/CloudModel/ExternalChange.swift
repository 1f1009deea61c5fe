/// Why `didChangeExternallyNotification` was posted, with Apple's numbers
/// (`NSUbiquitousKeyValueStoreChangeReasonKey`).
public enum ExternalChangeReason: String, Sendable, CaseIterable {
    case serverChange = "server-change"
    case initialSyncChange = "initial-sync-change"
    case quotaViolationChange = "quota-violation-change"
    case accountChange = "account-change"

    public var appleValue: Int {
        switch self {
        case .serverChange: 0
        case .initialSyncChange: 1
        case .quotaViolationChange: 2
        case .accountChange: 3
        }
    }

    /// The name Apple's constant has, e.g. "NSUbiquitousKeyValueStoreServerChange".
    public var appleName: String {
        switch self {
        case .serverChange: "NSUbiquitousKeyValueStoreServerChange"
        case .initialSyncChange: "NSUbiquitousKeyValueStoreInitialSyncChange"
        case .quotaViolationChange: "NSUbiquitousKeyValueStoreQuotaViolationChange"
        case .accountChange: "NSUbiquitousKeyValueStoreAccountChange"
        }
    }
}

/// One `didChangeExternallyNotification`: why, and which keys.
public struct ExternalChange: Sendable, Equatable {
    public var reason: ExternalChangeReason
    public var keys: [String]

    public init(reason: ExternalChangeReason, keys: [String]) {
        self.reason = reason
        self.keys = keys
    }
}
