/// What a name that names nothing most likely meant, for "did you mean" in errors.
package enum NameSuggestion {
    /// The candidate a typo most likely meant: the same but for case, or at most two edits away.
    package static func closest(to word: String, among candidates: [String]) -> String? {
        if let sameButCase = candidates.first(where: { $0.lowercased() == word.lowercased() }) { return sameButCase }
        let scored = candidates.map { ($0, editDistance(Array(word.lowercased()), Array($0.lowercased()))) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }

    package static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
