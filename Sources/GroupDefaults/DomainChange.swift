import PropertyList

/// Where a change came from.
public enum ChangeOrigin: String, Sendable, Codable {
    /// Made by this process (announced at once, before it is on disk).
    case thisProcess = "this-process"
    /// Found on disk: made by another process.
    case otherProcess = "other-process"
}

/// One key's change inside one domain.
package struct KeyChange: Sendable, Equatable {
    public let key: String
    public let old: PlistValue?
    public let new: PlistValue?
}

/// A batch of changes to one domain, as delivered to listeners.
package struct DomainChange: Sendable {
    public let domain: String
    public let changes: [KeyChange]
    public let origin: ChangeOrigin
}

/// Key-by-key differences between two versions of a dictionary.
/// One look-up per key of `new`; `old` is searched for removed keys only
/// when some of its keys were not found that way.
func differences(from old: [String: PlistValue], to new: [String: PlistValue]) -> [KeyChange] {
    var changes: [KeyChange] = []
    var kept = 0
    for (key, value) in new {
        guard let previous = old[key] else {
            changes.append(KeyChange(key: key, old: nil, new: value))
            continue
        }
        kept += 1
        if previous != value { changes.append(KeyChange(key: key, old: previous, new: value)) }
    }
    if kept < old.count {
        for (key, value) in old where new[key] == nil { changes.append(KeyChange(key: key, old: value, new: nil)) }
    }
    return changes.sorted { $0.key < $1.key }
}
