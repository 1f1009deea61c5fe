import CloudModel
import Foundation
import PropertyList
import Testing

/// Apple's limits for one store: 1024 keys, 64-byte keys, 1 MB values and
/// 1 MB in all; each checked at its edge and one past it.
@Suite struct CloudLimitsTests {
    /// A data value whose binary property-list form is exactly `size` bytes.
    static func value(ofSize size: Int) -> PlistValue {
        let overhead = CloudLimits.size(of: .data(Data(count: size))) - size
        for length in (size - overhead - 8)...(size - overhead + 8)
        where CloudLimits.size(of: .data(Data(count: length))) == size {
            return .data(Data(count: length))
        }
        fatalError("no data value encodes to \(size) bytes")
    }

    static func keys(_ count: Int) -> [String: PlistValue] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("key\($0)", PlistValue.integer(Int64($0))) })
    }

    @Test func atMost1024Keys() {
        #expect(CloudLimits.violation(of: Self.keys(1024), writing: "key1023") == nil)
        #expect(
            CloudLimits.violation(of: Self.keys(1025), writing: "key1024")
                == "the store would hold 1025 keys; it may hold at most 1024")
    }

    @Test func keysOfAtMost64BytesOfUTF8() {
        #expect(CloudLimits.violation(of: [String(repeating: "k", count: 64): 1], writing: String(repeating: "k", count: 64)) == nil)
        let ascii65 = String(repeating: "k", count: 65)
        #expect(
            CloudLimits.violation(of: [ascii65: 1], writing: ascii65)
                == "key \"\(ascii65)\" is 65 bytes of UTF-8; a key may have at most 64")
        // Bytes, not characters: 32 two-byte characters fit, 33 do not.
        let twoByte32 = String(repeating: "é", count: 32)
        let twoByte33 = String(repeating: "é", count: 33)
        #expect(CloudLimits.violation(of: [twoByte32: 1], writing: twoByte32) == nil)
        #expect(CloudLimits.violation(of: [twoByte33: 1], writing: twoByte33)?.contains("is 66 bytes of UTF-8") == true)
        // 16 four-byte characters are 64 bytes; one more byte is too many.
        let emoji16 = String(repeating: "😀", count: 16)
        #expect(CloudLimits.violation(of: [emoji16: 1], writing: emoji16) == nil)
        #expect(CloudLimits.violation(of: [emoji16 + "a": 1], writing: emoji16 + "a")?.contains("is 65 bytes of UTF-8") == true)
        // A combining sequence is one character of three bytes here.
        let combined = String(repeating: "e\u{301}", count: 21) + "a"  // 21 characters + 1, 64 bytes
        #expect(combined.count == 22 && CloudLimits.violation(of: [combined: 1], writing: combined) == nil)
        // The key checked is the one being written, even before it is in the store.
        #expect(CloudLimits.violation(of: [:], writing: ascii65) != nil)
    }

    @Test func aValueOfAtMost1MB() {
        let atLimit = Self.value(ofSize: CloudLimits.maximumValueBytes)
        #expect(CloudLimits.size(of: atLimit) == 1_048_576)
        // One value of 1 MB under one key fills an empty store exactly: keys
        // are limited on their own, not counted in the 1 MB.
        #expect(CloudLimits.violation(of: ["k": atLimit], writing: "k") == nil)
        #expect(CloudLimits.violation(of: [String(repeating: "k", count: 64): atLimit], writing: String(repeating: "k", count: 64)) == nil)
        // …and leaves no room for any other key, as Apple says.
        #expect(
            CloudLimits.violation(of: ["k": atLimit, "other": false], writing: "other")
                == "the store would hold 1048577 bytes; it may hold at most 1048576 (1 MB)")
        let overLimit = Self.value(ofSize: CloudLimits.maximumValueBytes + 1)
        #expect(
            CloudLimits.violation(of: ["k": overLimit], writing: "k")
                == "the value of key \"k\" is 1048577 bytes; a value may have at most 1048576")
        // Only the value being written is measured on its own.
        #expect(CloudLimits.violation(of: ["k": overLimit, "small": 1], writing: "small")?.hasPrefix("the store would hold") == true)
    }

    @Test func atMost1MBInAll() {
        // Four values that add up to exactly 1 MB, then one byte more; the keys add nothing.
        let quarter = CloudLimits.maximumStoreBytes / 4
        var values: [String: PlistValue] = [:]
        for key in ["a", "b", "c", "d"] { values[key] = Self.value(ofSize: quarter) }
        #expect(values.values.reduce(0) { $0 + CloudLimits.size(of: $1) } == 1_048_576)
        #expect(CloudLimits.violation(of: values, writing: "d") == nil)
        values["d"] = Self.value(ofSize: quarter + 1)
        #expect(
            CloudLimits.violation(of: values, writing: "d")
                == "the store would hold 1048577 bytes; it may hold at most 1048576 (1 MB)")
        // Whichever key is being written when the total goes over.
        #expect(CloudLimits.violation(of: values, writing: "a") != nil)
    }

    /// A refusal goes back to the device and into its events: it names the
    /// key, but must not carry a huge key whole.
    @Test func aRefusalOfAHugeKeyIsBrief() {
        let huge = String(repeating: "k", count: 1 << 20)
        let reason = CloudLimits.violation(of: [huge: 1], writing: huge) ?? ""
        #expect(reason.contains("is 1048576 bytes of UTF-8"))
        do {
            #expect(reason.count < 1000)
        }
    }
}
