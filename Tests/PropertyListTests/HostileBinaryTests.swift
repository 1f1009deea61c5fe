import Foundation
import Testing

@testable import PropertyList

/// Builds a binary property list by hand: each object's bytes (references
/// already written `refSize` wide), then the offset table and the trailer.
func handmadeBinary(_ objects: [[UInt8]], refSize: Int = 1, top: Int = 0) -> Data {
    var bytes = Array("bplist00".utf8)
    var offsets: [Int] = []
    for object in objects {
        offsets.append(bytes.count)
        bytes += object
    }
    let table = bytes.count
    let offsetSize = table <= 0xFF ? 1 : table <= 0xFFFF ? 2 : 4
    for offset in offsets { bytes += bigEndian(UInt64(offset), width: offsetSize) }
    bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)]
    bytes += bigEndian(UInt64(objects.count), width: 8) + bigEndian(UInt64(top), width: 8) + bigEndian(UInt64(table), width: 8)
    return Data(bytes)
}

func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
    (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> UInt64($0 * 8)) }
}

/// The hostile binary files kept in the fuzz corpus too (Fuzz/corpus/binary).
enum HostileBinary {
    /// An array whose one reference is 8 bytes wide and above Int64.max.
    static let hugeReference = handmadeBinary([[0xA1] + bigEndian(1 << 63 | 5, width: 8)], refSize: 8)

    /// 40 arrays, each referring twice to the next: 2^41 values once expanded.
    static let sharedReferences = handmadeBinary((0..<40).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] } + [[0x08]])

    /// `depth` arrays, each holding the next, around `false`.
    static func chain(depth: Int) -> Data {
        handmadeBinary((0..<depth).map { [0xA1] + bigEndian(UInt64($0 + 1), width: 2) } + [[0x08]], refSize: 2)
    }
}

@Suite struct HostileBinaryTests {
    func expectCorrupt(_ data: Data, at offset: Int? = nil, containing text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let value = try BinaryPropertyList.decode(data)
            Issue.record("decoded \(value.typeName) instead of failing", sourceLocation: sourceLocation)
        } catch let PropertyListError.corruptBinary(found, reason) {
            if let offset { #expect(found == offset, sourceLocation: sourceLocation) }
            #expect(reason.contains(text), "\(reason)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func referenceAboveInt64MaxIsAnErrorWithItsOffset() {
        // The reference sits after the header (8 bytes) and the array's marker.
        expectCorrupt(HostileBinary.hugeReference, at: 9, containing: "reference 9223372036854775813 is not one of the 1 objects")
    }

    @Test func trailerNumbersAboveInt64MaxAreErrors() {
        var bytes = [UInt8](handmadeBinary([[0x08]]))
        let trailer = bytes.count - 32
        for field in [8, 16, 24] {
            var broken = bytes
            broken.replaceSubrange(trailer + field..<trailer + field + 8, with: bigEndian(UInt64.max - 1, width: 8))
            expectCorrupt(Data(broken), at: trailer + field, containing: "18446744073709551614")
        }
        // A length of 2^63 in an 8-byte length integer.
        bytes = [UInt8](handmadeBinary([[0x4F, 0x13] + bigEndian(1 << 63, width: 8)]))
        expectCorrupt(Data(bytes), at: 9, containing: "length 9223372036854775808")
    }

    @Test func sharedReferencesAreDecodedOnceAndCountedEachTime() {
        expectCorrupt(HostileBinary.sharedReferences, containing: "more than \(PlistLimits.maximumValueCount) values")
    }

    @Test func sharedReferencesWithinTheLimitsDecodeToTheExpandedValue() throws {
        // 12 levels of two references each: 2^13 - 1 values, all shared.
        let data = handmadeBinary((0..<12).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] } + [[0x10, 7]])
        var expected: PlistValue = 7
        for _ in 0..<12 { expected = [expected, expected] }
        #expect(try BinaryPropertyList.decode(data) == expected)
    }

    @Test func nestingIsLimitedTo512() throws {
        #expect(try BinaryPropertyList.decode(HostileBinary.chain(depth: 512)).nestingDepth() == 512)
        expectCorrupt(HostileBinary.chain(depth: 513), containing: "deeper than 512")
        expectCorrupt(HostileBinary.chain(depth: 100_000), containing: "deeper than 512")
    }

    @Test func aSharedCollectionCountsItsDepthOnEveryPath() {
        // Root [X, C]: X is 5 arrays deep, first reached at depth 1; C is a
        // chain of 510 arrays whose innermost holds X again, 516 deep in all.
        var objects: [[UInt8]] = [[0xA2, 0, 1, 0, 6]]  // object 0: root -> 1 (X), 6 (C)
        for level in 1...5 { objects.append([0xA1] + bigEndian(UInt64(level == 5 ? 516 : level + 1), width: 2)) }
        for link in 0..<510 { objects.append([0xA1] + bigEndian(UInt64(link == 509 ? 1 : 7 + link), width: 2)) }
        objects.append([0x08])  // object 516: the leaf inside X
        expectCorrupt(handmadeBinary(objects, refSize: 2), containing: "deeper than 512")
    }

    @Test func anArrayThatContainsItselfThroughAnotherIsAnError() {
        expectCorrupt(handmadeBinary([[0xA1, 1], [0xA1, 0]]), containing: "contains itself")
    }

    @Test func invalidUTF8InAnASCIIStringIsAnError() {
        expectCorrupt(handmadeBinary([[0x53, 0x61, 0xC3, 0x28]]), at: 8, containing: "not valid UTF-8")
    }

    @Test func anUnpairedSurrogateInAUTF16StringIsAnError() throws {
        expectCorrupt(handmadeBinary([[0x62, 0x00, 0x61, 0xD8, 0x00]]), at: 8, containing: "unpaired surrogate")
        expectCorrupt(handmadeBinary([[0x61, 0xDC, 0x00]]), at: 8, containing: "unpaired surrogate")
        // A proper pair still decodes.
        #expect(try BinaryPropertyList.decode(handmadeBinary([[0x62, 0xD8, 0x3C, 0xDF, 0x89]])) == "🎉")
    }

    @Test func objectOffsetsMustLieBeforeTheOffsetTable() {
        var bytes = [UInt8](handmadeBinary([[0x08]]))
        bytes[9] = 9  // object 0's offset now points at the offset table itself
        expectCorrupt(Data(bytes), at: 9, containing: "has offset 9, outside the objects")
    }

    @Test func objectsMayNotRunIntoTheOffsetTable() {
        // A 5-byte string claimed, 1 byte present before the table.
        expectCorrupt(handmadeBinary([[0x55, 0x61]]), containing: "runs past the end of the objects")
        expectCorrupt(handmadeBinary([[0x13, 0x00]]), containing: "runs past the end of the objects")
    }

    @Test func duplicateKeysAreAnError() {
        expectCorrupt(handmadeBinary([[0xD2, 1, 1, 2, 2], [0x51, 0x6B], [0x08]]), containing: "appears twice")
    }

    @Test func objectCountIsBoundedByTheData() {
        var bytes = [UInt8](handmadeBinary([[0x08]]))
        let trailer = bytes.count - 32
        bytes.replaceSubrange(trailer + 8..<trailer + 16, with: bigEndian(2, width: 8))
        expectCorrupt(Data(bytes), at: trailer + 8, containing: "object count 2 is more than the data can hold")
    }

    @Test func theEncoderHandlesAValueDeeperThanAnyReaderAccepts() {
        // Callers refuse such values with checkNesting; the encoder itself must not run out of stack.
        var value: PlistValue = "leaf"
        for _ in 0..<100_000 { value = [value] }
        #expect(BinaryPropertyList.encode(value).count > 100_000)
        #expect(throws: PlistError.tooDeep(what: "the value", limit: PlistLimits.maximumDepth)) { try value.checkNesting(what: "the value") }
        // Unwind iteratively: releasing a 100,000-deep value at once recurses too.
        while case .array(let inner) = value, let next = inner.first { value = next }
    }
}
