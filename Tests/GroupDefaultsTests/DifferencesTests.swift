import PropertyList
import Testing

@testable import GroupDefaults

/// What a reload or commit announces: added, changed and removed keys, in
/// key order, whether or not the two versions have as many keys.
@Suite struct DifferencesTests {
    @Test(arguments: [
        (["a": 1, "b": 2] as [String: PlistValue], ["a": 1, "b": 3] as [String: PlistValue], ["b"]),
        (["a": 1, "b": 2], ["a": 1, "c": 2], ["b", "c"]),
        (["a": 1, "b": 2], ["a": 1], ["b"]),
        (["a": 1], ["a": 1, "b": 2], ["b"]),
        (["a": 1, "b": 2], ["c": 1, "d": 2, "e": 3], ["a", "b", "c", "d", "e"]),
        (["a": 1], ["a": 1], []),
    ])
    func everyAddedChangedAndRemovedKeyIsFound(old: [String: PlistValue], new: [String: PlistValue], keys: [String]) {
        let changes = differences(from: old, to: new)
        #expect(changes.map(\.key) == keys)
        for change in changes {
            #expect(change.old == old[change.key])
            #expect(change.new == new[change.key])
        }
    }
}
