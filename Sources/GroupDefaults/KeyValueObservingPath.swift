import PropertyList

/// How Apple's key-value observing reads a key path on `UserDefaults`: the
/// part before the first dot is a defaults key, each part after it a key
/// into that value (a dictionary's entry). So "sync.theme" observes the key
/// "sync" and reads "theme" inside its value, and a key that is itself named
/// "sync.theme" is never observed. A path starting with '@' is a collection
/// operator, which names no key at all. SimulatedFoundation's `addObserver`
/// and the built-in widget's key-value observer both follow it.
package struct KeyValueObservingPath: Sendable, Equatable {
    /// The defaults key whose changes are delivered (nil: none ever is).
    package let key: String?
    /// The keys followed inside that key's value.
    package let inside: [String]

    package init(_ keyPath: String) {
        if keyPath.hasPrefix("@") {
            (key, inside) = (nil, [])
            return
        }
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        (key, inside) = (parts[0], Array(parts.dropFirst()))
    }

    /// The value the path reaches from the key's value (nil: absent, or no dictionary on the way).
    package func value(from keyValue: PlistValue?) -> PlistValue? {
        var current = keyValue
        for part in inside {
            guard case .dictionary(let entries)? = current else { return nil }
            current = entries[part]
        }
        return current
    }

    /// Why a key named as the whole path is never delivered (nil: a plain key, delivered as itself).
    /// `observing` names who observes, e.g. `addObserver(_:forKeyPath: "a.b")`.
    package func neverDeliveredWarning(observing: String, keyPath: String) -> String? {
        guard let key else {
            return "\(observing): a key path starting with '@' is a collection operator, not a key; "
                + "key-value observing never delivers a change for it (as on Apple platforms). Observe a key without '@'"
        }
        guard !inside.isEmpty else { return nil }
        return "\(observing): key-value observing reads a dotted key path as the key '\(key)', then "
            + inside.map { "'\($0)'" }.joined(separator: ", then ") + " inside its value (as on Apple platforms): a change of a key "
            + "named '\(keyPath)' is never delivered. Use a key without dots, or read the key again after UserDefaults.didChangeNotification "
            + "(which reports this process's own changes only)"
    }
}
