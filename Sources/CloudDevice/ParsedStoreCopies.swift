import CloudModel
import PropertyList

/// The last `StoreCopy` read from or written to each store's file, with the
/// dictionary it stands for. A process that commits a copy is handed that
/// same dictionary back by the file layer (its own commit is not read
/// again), so the next transaction, or the next look at the copy, finds it
/// here after comparing two references, where parsing the copy again took
/// about a tenth of a sync agent's time per change.
package struct ParsedStoreCopies {
    private var last: [String: (contents: [String: PlistValue], copy: StoreCopy)] = [:]

    package init() {}

    /// `contents` as a copy: the one kept when it is the same dictionary
    /// (the same storage, or equal), else parsed and kept. `path` names the file in errors.
    package mutating func copy(of contents: [String: PlistValue], store: String, path: @autoclosure () -> String) throws(CloudFormatError)
        -> StoreCopy
    {
        if let known = last[store], known.contents == contents { return known.copy }
        let copy = try StoreCopy(contents, path: path())
        last[store] = (contents, copy)
        return copy
    }

    /// Keeps `copy` as what `contents` (its `plist`, about to be committed) stands for.
    package mutating func wrote(_ copy: StoreCopy, as contents: [String: PlistValue], store: String) {
        // Every test run checks that the file's form gives back the same copy, so keeping it is the same as parsing it again.
        assert((try? StoreCopy(contents, path: store)) == copy, "a copy of \(store) does not read back as itself")
        last[store] = (contents, copy)
    }
}
