import PropertyList

/// Which of a process's observing mechanisms was called: what a `delivery`
/// event names, for an executable that links SimulatedFoundation and serves
/// the control channel (docs/protocol.md, "The control channel of your own executable").
public enum DeliveryMechanism: String, Sendable, CaseIterable {
    /// `GroupSim.observe(_:_:_:)`, the simulation's own key observer.
    case observe
    /// `addObserver(_:forKeyPath:options:context:)`: the observer's `observeValue(forKeyPath:of:change:context:)`.
    case keyValueObserver = "key-value-observer"
    /// `observe(\.property, options:changeHandler:)`: the change handler.
    case keyPathObservation = "key-path-observation"
    /// `UserDefaults.didChangeNotification` was posted (this process changed defaults through an instance).
    case didChangeNotification = "did-change-notification"
    /// `NSUbiquitousKeyValueStore.didChangeExternallyNotification` was posted.
    case didChangeExternally = "did-change-externally"
}

/// One delivery to the process's own observers, reported once the observer
/// (or every receiver of the notification) has returned.
public struct Delivery: Sendable, Equatable, CustomStringConvertible {
    public let mechanism: DeliveryMechanism
    /// The key whose change was delivered; for `did-change-notification`, the
    /// key the call changed when it changed one (nil for whole-domain calls);
    /// nil for `did-change-externally` (see `keys`).
    public let key: String?
    public let old: PlistValue?
    /// The key's effective value after the change (nil: absent).
    public let new: PlistValue?
    /// "this-process" or "other-process"; "other-device" for `did-change-externally`.
    public let origin: String
    /// The domain of the `UserDefaults` instance delivered through (its suite
    /// or the bundle id), or the iCloud store's identifier.
    public let domain: String
    /// `did-change-externally`: the reason (server-change, initial-sync-change,
    /// quota-violation-change, account-change) and the changed keys.
    public let reason: String?
    public let keys: [String]

    package init(
        mechanism: DeliveryMechanism, key: String?, old: PlistValue?, new: PlistValue?, origin: String, domain: String,
        reason: String? = nil, keys: [String] = []
    ) {
        self.mechanism = mechanism
        self.key = key
        self.old = old
        self.new = new
        self.origin = origin
        self.domain = domain
        self.reason = reason
        self.keys = keys
    }

    public var description: String {
        func show(_ value: PlistValue?) -> String { value.map { PlistJSON.encode($0) } ?? "absent" }
        if mechanism == .didChangeExternally {
            return "delivered \(mechanism.rawValue) (\(reason ?? "?")): \(keys.isEmpty ? "no keys" : keys.joined(separator: ", "))"
        }
        return "delivered \(mechanism.rawValue) \(key ?? "(no key)"): \(show(old)) → \(show(new)) (\(origin), \(domain))"
    }
}
