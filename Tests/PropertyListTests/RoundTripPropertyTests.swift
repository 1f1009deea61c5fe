import Foundation
import PropertyBased
import Testing

@testable import PropertyList

/// Random property-list values, nested up to a few levels, with the awkward
/// scalars mixed in: NaN and signed zeros, extreme integers, dates with
/// fractions, strings with markup, controls and characters beyond the BMP.
enum PlistGen {
    static let scalarText = [
        "", "plain", "two words", "a<b & c>d", "tab\tline\nreturn\r", "héllo ✓ 🎉", "\u{0}\u{1F}", "//comment", "/*x",
        "//not a comment", "/*", "\"quoted\" \\", "$+/:.-_", "'", "(", "{", "<0a>",
    ]

    static func value(maximumDepth: Int, oldStyleOnly: Bool = false) -> Generator<PlistValue, [PlistValue]> {
        Generator(
            run: { rng in make(depth: maximumDepth, oldStyleOnly: oldStyleOnly, using: &rng) },
            shrink: { shrink($0) })
    }

    static func make(depth: Int, oldStyleOnly: Bool, using rng: inout any SeededRandomNumberGenerator) -> PlistValue {
        let kinds = oldStyleOnly ? 4 : 8
        switch Int.random(in: 0..<(depth > 0 ? kinds : kinds - 2), using: &rng) {
        case 0: return .string(text(using: &rng))
        case 1: return .data(Data((0..<Int.random(in: 0...20, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        case 2 where oldStyleOnly, 6:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in make(depth: depth - 1, oldStyleOnly: oldStyleOnly, using: &rng) })
        case 3 where oldStyleOnly, 7:
            var entries: [String: PlistValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                entries[text(using: &rng)] = make(depth: depth - 1, oldStyleOnly: oldStyleOnly, using: &rng)
            }
            return .dictionary(entries)
        case 2:
            let edges: [Int64] = [0, 1, -1, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296, .max, .min]
            return .integer(Bool.random(using: &rng) ? edges.randomElement(using: &rng)! : Int64.random(in: .min ... .max, using: &rng))
        case 3:
            let edges: [Double] = [0, -0.0, .nan, -.nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1]
            return .real(
                Bool.random(using: &rng)
                    ? edges.randomElement(using: &rng)!
                    : Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng)))
        case 4: return .bool(Bool.random(using: &rng))
        default: return .date(Date(timeIntervalSinceReferenceDate: Double.random(in: -1e11...1e11, using: &rng)))
        }
    }

    static func text(using rng: inout any SeededRandomNumberGenerator) -> String {
        if Bool.random(using: &rng) { return scalarText.randomElement(using: &rng)! }
        let scalars = (0..<Int.random(in: 0...12, using: &rng)).compactMap { _ in
            Unicode.Scalar(UInt32.random(in: Bool.random(using: &rng) ? 0...0x7F : 0...0x10FFFF, using: &rng))
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Smaller values: a collection's children and halves, the simplest scalar of each kind.
    static func shrink(_ value: PlistValue) -> [PlistValue] {
        switch value {
        case .array(let elements):
            return elements.isEmpty ? [] : [.array([])] + [.array(Array(elements.prefix(elements.count / 2)))] + elements
        case .dictionary(let entries):
            let sorted = entries.sorted { $0.key < $1.key }
            let half = Dictionary(uniqueKeysWithValues: sorted.prefix(entries.count / 2).map { ($0.key, $0.value) })
            return entries.isEmpty ? [] : [.dictionary([:]), .dictionary(half)] + sorted.map(\.value)
        case .string(let s): return s.isEmpty ? [] : [.string("")]
        case .data(let d): return d.isEmpty ? [] : [.data(Data())]
        case .integer(let i): return i == 0 ? [] : [.integer(0)]
        case .real(let d): return d.bitPattern == 0 ? [] : [.real(0)]
        case .bool(let b): return b ? [.bool(false)] : []
        case .date(let d): return d.timeIntervalSinceReferenceDate.bitPattern == 0 ? [] : [.date(Date(timeIntervalSinceReferenceDate: 0))]
        }
    }

    /// The value as XML holds it: whole-second dates, one NaN.
    static func asXMLHoldsIt(_ value: PlistValue) -> PlistValue {
        switch value {
        case .real(let d) where d.isNaN: .real(.nan)
        case .date(let d): .date(Date(timeIntervalSinceReferenceDate: d.timeIntervalSinceReferenceDate.rounded(.down)))
        case .array(let elements): .array(elements.map(asXMLHoldsIt))
        case .dictionary(let entries): .dictionary(entries.mapValues(asXMLHoldsIt))
        default: value
        }
    }
}

@Suite struct RoundTripPropertyTests {
    @Test func binaryKeepsEveryValueExactly() async {
        await propertyCheck(count: 300, input: PlistGen.value(maximumDepth: 4)) { value throws in
            #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(value)) == value)
        }
    }

    @Test func xmlKeepsEveryValueAsItsFormCan() async {
        await propertyCheck(count: 300, input: PlistGen.value(maximumDepth: 4)) { value throws in
            #expect(try XMLPropertyList.decode(XMLPropertyList.encode(value)) == PlistGen.asXMLHoldsIt(value))
        }
    }

    @Test func oldStylePrintingParsesBack() async {
        await propertyCheck(count: 300, input: PlistGen.value(maximumDepth: 4, oldStyleOnly: true)) { value throws in
            #expect(try OldStylePropertyList.parse(OldStylePropertyList.describe(value)) == value)
        }
    }

    @Test func equalValuesHashAlikeAndEveryValueEqualsItself() async {
        await propertyCheck(count: 300, input: PlistGen.value(maximumDepth: 3)) { value throws in
            let copy = try BinaryPropertyList.decode(BinaryPropertyList.encode(value))  // equal, separately built
            #expect(value == value)
            #expect(copy == value)
            #expect(copy.hashValue == value.hashValue)
            #expect(Set([value, copy]).count == 1)
        }
    }
}
