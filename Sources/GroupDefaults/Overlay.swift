import PropertyList

/// Edits not yet on disk, over a base dictionary. `replace` means the base is
/// discarded first (`setPersistentDomain`, `removePersistentDomain`).
struct Overlay {
    var replace = false
    var edits: [String: PlistValue?] = [:]

    var isEmpty: Bool { !replace && edits.isEmpty }

    /// The value this overlay decides for `key`: nil if it does not decide it.
    func decision(forKey key: String) -> PlistValue?? {
        if let edit = edits[key] { return .some(edit) }
        return replace ? .some(nil) : nil
    }

    func applied(to base: [String: PlistValue]) -> [String: PlistValue] {
        var result = replace ? [:] : base
        for (key, value) in edits { result[key] = value }
        return result
    }

    /// `newer` on top of `self`.
    func merged(with newer: Overlay) -> Overlay {
        if newer.replace { return newer }
        var result = self
        for (key, value) in newer.edits { result.edits[key] = value }
        return result
    }
}
