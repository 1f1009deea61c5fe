import Foundation
import PropertyBased
import Testing

@testable import PropertyList

/// A decode that reuses the values of the file's last version
/// (`PropertyListFormat.decodeDictionary(_:reusing:maximumSize:)`) must give
/// exactly what a whole decode gives, and fail wherever it fails, whatever
/// the two files are.
@Suite struct ReusingDecodeTests {
    /// What a whole decode of `bytes` gives, or nil if it fails.
    static func wholeDecode(_ bytes: [UInt8]) -> [String: PlistValue]? {
        try? PropertyListFormat.decodeDictionary(Data(bytes))
    }

    /// The decode reusing `previous`'s, checked against a whole decode.
    static func expectSameAsWholeDecode(
        _ bytes: [UInt8], previous: [UInt8], note: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let prior = wholeDecode(previous) else { return }
        let reused = try? PropertyListFormat.decodeDictionary(bytes, reusing: (previous, prior))
        #expect(reused == wholeDecode(bytes), "\(note) bytes \(bytes)", sourceLocation: sourceLocation)
    }

    /// A domain, and the same domain after an edit: values changed (to other
    /// scalars, or to collections), keys added or removed, an entry of a
    /// dictionary inside changed (at any depth), or nothing.
    static func domainAndEdit(using rng: inout any SeededRandomNumberGenerator) -> (before: [String: PlistValue], after: [String: PlistValue]) {
        var before: [String: PlistValue] = [:]
        for index in 0..<Int.random(in: 0...12, using: &rng) {
            before[Bool.random(using: &rng) ? "key-\(index)" : PlistGen.text(using: &rng)] = PlistGen.make(
                depth: Int.random(in: 0...2, using: &rng), oldStyleOnly: false, using: &rng)
        }
        var after = before
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: if let key = after.keys.randomElement(using: &rng) { after[key] = PlistGen.make(depth: 0, oldStyleOnly: false, using: &rng) }
            case 1: if let key = after.keys.randomElement(using: &rng) { after[key] = PlistGen.make(depth: 2, oldStyleOnly: false, using: &rng) }
            case 2: if let key = after.keys.randomElement(using: &rng) { after[key] = nil }
            case 3: after[PlistGen.text(using: &rng)] = PlistGen.make(depth: 1, oldStyleOnly: false, using: &rng)
            default:
                if let key = after.keys.randomElement(using: &rng), let value = after[key] {
                    after[key] = editedInside(value, using: &rng)
                }
            }
        }
        return (before, after)
    }

    /// `value` with one entry of a dictionary in it (itself, or one nested
    /// in it, chosen at random) set to a new value, added or removed.
    static func editedInside(_ value: PlistValue, using rng: inout any SeededRandomNumberGenerator) -> PlistValue {
        switch value {
        case .dictionary(var entries):
            if let key = entries.keys.randomElement(using: &rng), let inner = entries[key], Bool.random(using: &rng) {
                entries[key] = editedInside(inner, using: &rng)
            } else if let key = entries.keys.randomElement(using: &rng), Bool.random(using: &rng) {
                entries[key] = Bool.random(using: &rng) ? nil : PlistGen.make(depth: 1, oldStyleOnly: false, using: &rng)
            } else {
                entries[PlistGen.text(using: &rng)] = PlistGen.make(depth: 0, oldStyleOnly: false, using: &rng)
            }
            return .dictionary(entries)
        case .array(var elements) where !elements.isEmpty:
            let index = Int.random(in: 0..<elements.count, using: &rng)
            elements[index] = editedInside(elements[index], using: &rng)
            return .array(elements)
        default:
            return PlistGen.make(depth: 0, oldStyleOnly: false, using: &rng)
        }
    }

    /// Both versions written by this writer, or by Foundation's (another
    /// layout: other object numbers, other key order).
    @Test func givesWhatAWholeDecodeGivesAfterAnyEdit() async {
        await propertyCheck(count: 500, input: Generator(run: { rng in Self.domainAndEdit(using: &rng) }, shrink: { _ in [] })) { edit in
            let ours = (BinaryPropertyList.encodedBytes(.dictionary(edit.before)), BinaryPropertyList.encodedBytes(.dictionary(edit.after)))
            Self.expectSameAsWholeDecode(ours.1, previous: ours.0)
            Self.expectSameAsWholeDecode(ours.0, previous: ours.1)
            let foundation = [edit.before, edit.after].map {
                try? PropertyListSerialization.data(fromPropertyList: PlistValue.dictionary($0).foundationValue, format: .binary, options: 0)
            }
            if let before = foundation[0], let after = foundation[1] {
                Self.expectSameAsWholeDecode([UInt8](after), previous: [UInt8](before))
                Self.expectSameAsWholeDecode([UInt8](after), previous: ours.0)
                Self.expectSameAsWholeDecode(ours.1, previous: [UInt8](before))
            }
        }
    }

    /// Hostile bytes: the new version with bytes flipped, against a whole
    /// decode of the same bytes (equal, or both failing).
    @Test func failsWhereAWholeDecodeFails() {
        var rng = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0 ... .max, using: &rng)
        var generator: any SeededRandomNumberGenerator = Xoshiro(seed: (seed, 0x9E37_79B9_7F4A_7C15, ~seed, 1))
        for _ in 0..<3000 {
            let edit = Self.domainAndEdit(using: &generator)
            let previous = BinaryPropertyList.encodedBytes(.dictionary(edit.before))
            var bytes = BinaryPropertyList.encodedBytes(.dictionary(edit.after))
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 8..<bytes.count, using: &generator)
                bytes[at] = Bool.random(using: &generator) ? UInt8.random(in: 0...255, using: &generator) : bytes[at] ^ 0x80
            }
            Self.expectSameAsWholeDecode(bytes, previous: previous, note: "seed \(seed)")
            if Self.wholeDecode(bytes) != nil {
                #expect(throws: Never.self, "seed \(seed)") { try PropertyListFormat.decodeDictionary(bytes, reusing: nil) }
            }
        }
    }

    /// The point of it: an unchanged value is the previous decode's own
    /// (its string storage is shared), a changed one is new.
    @Test func anUnchangedValueIsTakenFromThePreviousDecode() throws {
        var before: [String: PlistValue] = [:]
        for index in 0..<100 { before["key-\(index)"] = .string("value \(index), longer than a small string") }
        var after = before
        after["key-7"] = .string("changed, and longer than a small string")
        let previous = BinaryPropertyList.encodedBytes(.dictionary(before))
        let prior = try PropertyListFormat.decodeDictionary(previous, reusing: nil)
        let decoded = try PropertyListFormat.decodeDictionary(BinaryPropertyList.encodedBytes(.dictionary(after)), reusing: (previous, prior))
        #expect(decoded == after)
        func storage(_ value: PlistValue?) -> UnsafeRawPointer? {
            guard case .string(var string)? = value else { return nil }
            return string.withUTF8 { UnsafeRawPointer($0.baseAddress) }
        }
        #expect(storage(decoded["key-50"]) == storage(prior["key-50"]))
        #expect(storage(decoded["key-7"]) != storage(prior["key-7"]))
        // Without the previous decode, every value is made anew.
        let whole = try PropertyListFormat.decodeDictionary(BinaryPropertyList.encodedBytes(.dictionary(after)), reusing: nil)
        #expect(storage(whole["key-50"]) != storage(prior["key-50"]))
    }

    /// Inside a changed dictionary too: an unchanged entry, and an unchanged
    /// dictionary in it, are the previous decode's own; only the changed entry is new.
    @Test func anUnchangedEntryOfAChangedDictionaryIsTakenFromThePreviousDecode() throws {
        var stamps: [String: PlistValue] = [:]
        for index in 0..<100 {
            stamps["key-\(index)"] = .dictionary([
                "device": .string("device \(index), longer than a small string"), "sequence": .integer(Int64(index)),
            ])
        }
        let before: [String: PlistValue] = ["stamps": .dictionary(stamps), "revision": .integer(1)]
        var after = before
        stamps["key-7"] = .dictionary(["device": .string("another device, longer than a small string"), "sequence": .integer(7)])
        after["stamps"] = .dictionary(stamps)
        let previous = BinaryPropertyList.encodedBytes(.dictionary(before))
        let prior = try PropertyListFormat.decodeDictionary(previous, reusing: nil)
        let decoded = try PropertyListFormat.decodeDictionary(BinaryPropertyList.encodedBytes(.dictionary(after)), reusing: (previous, prior))
        #expect(decoded == after)
        func device(_ top: [String: PlistValue], _ key: String) -> PlistValue? { top["stamps"]?.dictionaryValue?[key]?.dictionaryValue?["device"] }
        func storage(_ value: PlistValue?) -> UnsafeRawPointer? {
            guard case .string(var string)? = value else { return nil }
            return string.withUTF8 { UnsafeRawPointer($0.baseAddress) }
        }
        #expect(storage(device(decoded, "key-50")) == storage(device(prior, "key-50")))
        #expect(storage(device(decoded, "key-7")) != storage(device(prior, "key-7")))
    }

    /// A dictionary inside that refers to the dictionary holding it is caught as a whole decode catches it.
    @Test func aNestedDictionaryThatContainsItsParentIsRefused() throws {
        // { "k": { "n": false } }, after { "k": { "n": <the dictionary under "k"> } }.
        let previous = [UInt8](handmadeBinary([[0xD1, 1, 2], [0x51, 0x6B], [0xD1, 3, 4], [0x51, 0x6E], [0x08]]))
        let cyclic = [UInt8](handmadeBinary([[0xD1, 1, 2], [0x51, 0x6B], [0xD1, 3, 2], [0x51, 0x6E], [0x08]]))
        let prior = try PropertyListFormat.decodeDictionary(previous, reusing: nil)
        #expect(throws: PropertyListError.self) { try PropertyListFormat.decodeDictionary(cyclic, reusing: (previous, prior)) }
        // And one that refers to itself through an array.
        let throughArray = [UInt8](handmadeBinary([[0xD1, 1, 2], [0x51, 0x6B], [0xD1, 3, 4], [0x51, 0x6E], [0xA1, 2]]))
        #expect(throws: PropertyListError.self) { try PropertyListFormat.decodeDictionary(throughArray, reusing: (previous, prior)) }
    }

    /// Shared references are counted each time, as a whole decode counts
    /// them: a file whose unchanged value, reused, and a changed one refer to
    /// the same large subtree is refused when the two together pass the limit.
    @Test func sharedReferencesOverTheLimitAreRefused() throws {
        // { "a": X, "b": V }, X 20 levels of arrays each referring twice to the next (2^21 values, under the limit).
        func file(bRefersToX: Bool) -> [UInt8] {
            let levels = 20
            var objects: [[UInt8]] = [[0xD2, 1, 2, 3, bRefersToX ? 3 : UInt8(4 + levels)], [0x51, 0x61], [0x51, 0x62]]
            for level in 0..<levels { objects.append([0xA2, UInt8(4 + level), UInt8(4 + level)]) }
            objects.append([0x08])
            objects.append([0x10, 0x01])
            return [UInt8](handmadeBinary(objects))
        }
        let previous = file(bRefersToX: false)
        let prior = try PropertyListFormat.decodeDictionary(previous, reusing: nil)
        let twice = file(bRefersToX: true)
        #expect(Self.wholeDecode(twice) == nil)
        #expect(throws: PropertyListError.self) { try PropertyListFormat.decodeDictionary(twice, reusing: (previous, prior)) }
        // The same file again is reused whole, and counted once as before.
        #expect(try PropertyListFormat.decodeDictionary(previous, reusing: (previous, prior)) == prior)
    }

    /// A value that refers to the top dictionary is caught as a whole decode catches it.
    @Test func aValueThatContainsTheTopDictionaryIsRefused() throws {
        // { "k": <the top dictionary> }, after { "k": false }: the same key, a changed value.
        let previous = [UInt8](handmadeBinary([[0xD1, 1, 2], [0x51, 0x6B], [0x08]]))
        let cyclic = [UInt8](handmadeBinary([[0xD1, 1, 0], [0x51, 0x6B], [0x08]]))
        let prior = try PropertyListFormat.decodeDictionary(previous, reusing: nil)
        #expect(throws: PropertyListError.self) { try PropertyListFormat.decodeDictionary(cyclic, reusing: (previous, prior)) }
    }
}
