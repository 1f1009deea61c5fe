/// The limits every reader and every writer of property lists share, so that
/// what one process accepts and writes, every other process can read back.
/// A value or file past a limit is refused where it enters (a parser, a
/// `set`, a commit) with an error that names the limit, never written.
package enum PlistLimits {
    /// Arrays and dictionaries nested inside each other, the top level counting as 1.
    /// Every decoder refuses deeper input, and every writer refuses deeper values.
    package static let maximumDepth = 512

    /// The deepest value one key of a domain may hold: the domain's own
    /// dictionary is the file's first level.
    package static let maximumValueDepth = maximumDepth - 1

    /// The largest suite file a reader reads and a writer writes (16 MiB; Apple
    /// warns at 4 MiB). Bounds the memory one hostile file can make a reader take.
    package static let maximumFileSize = 16 << 20

    /// How many values a decoded property list may hold in all, shared
    /// references counted each time they are used: bounds the work that
    /// every later step (compare, encode, print) does on one small file.
    package static let maximumValueCount = 4_000_000
}

extension PlistValue {
    /// How deep arrays and dictionaries nest in this value (a scalar is 0,
    /// `[1]` is 1), counting at most to `limit + 1` so a hostile value costs little.
    package func nestingDepth(upTo limit: Int = PlistLimits.maximumDepth) -> Int {
        switch self {
        case .array(let elements):
            guard limit >= 0 else { return 1 }
            return 1 + (elements.lazy.map { $0.nestingDepth(upTo: limit - 1) }.max() ?? 0)
        case .dictionary(let entries):
            guard limit >= 0 else { return 1 }
            return 1 + (entries.values.lazy.map { $0.nestingDepth(upTo: limit - 1) }.max() ?? 0)
        default:
            return 0
        }
    }

    /// Throws if the value nests deeper than `limit`; `what` names the value
    /// in the message ("the value for key \"theme\"").
    package func checkNesting(what: String, limit: Int = PlistLimits.maximumDepth) throws {
        if nestingDepth(upTo: limit) > limit {
            throw PlistError.tooDeep(what: what, limit: limit)
        }
    }
}
