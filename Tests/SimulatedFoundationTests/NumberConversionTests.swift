import GroupDefaults
import SimulatedFoundation
import TestSupport
import Testing

/// The conversions between number kinds, strings and booleans, against what
/// Foundation's own UserDefaults gives on Linux (swift-corelibs-foundation,
/// measured with a program of its own: docs/api.md has the table). The
/// conversions are of the stored value, so another process reads the same.
@Suite struct NumberConversionTests {
    struct Reads: Equatable, CustomStringConvertible {
        var string: String?
        var integer: Int
        var bool: Bool
        var float: Float
        var double: Double

        init(_ string: String?, _ integer: Int, _ bool: Bool, _ float: Float, _ double: Double) {
            (self.string, self.integer, self.bool, self.float, self.double) = (string, integer, bool, float, double)
        }

        init(_ defaults: UserDefaults, _ key: String) {
            self.init(
                defaults.string(forKey: key), defaults.integer(forKey: key), defaults.bool(forKey: key),
                defaults.float(forKey: key), defaults.double(forKey: key))
        }

        /// NaN equals NaN here: the table says what is read, not arithmetic.
        static func == (a: Reads, b: Reads) -> Bool {
            a.string == b.string && a.integer == b.integer && a.bool == b.bool
                && (a.float == b.float || a.float.isNaN && b.float.isNaN)
                && (a.double == b.double || a.double.isNaN && b.double.isNaN)
        }

        var description: String { "string \(string ?? "nil"), integer \(integer), bool \(bool), float \(float), double \(double)" }
    }

    /// Every row as Foundation on Linux reads it, except where noted.
    static let table: [(key: String, set: @Sendable (UserDefaults, String) -> Void, reads: Reads)] = [
        ("float", { $0.set(Float(12.34), forKey: $1) }, Reads("12.34", 12, true, 12.34, Double(Float(12.34)))),
        ("floatThird", { $0.set(Float(1.0 / 3.0), forKey: $1) }, Reads("0.33333334", 0, true, Float(1.0 / 3.0), Double(Float(1.0 / 3.0)))),
        ("floatTenth", { $0.set(Float(0.1), forKey: $1) }, Reads("0.1", 0, true, 0.1, 0.10000000149011612)),
        ("floatAsAny", { $0.set(Float(12.34) as Any, forKey: $1) }, Reads("12.34", 12, true, 12.34, Double(Float(12.34)))),
        ("double", { $0.set(12.34, forKey: $1) }, Reads("12.34", 12, true, 12.34, 12.34)),
        ("doubleThird", { $0.set(1.0 / 3.0, forKey: $1) }, Reads("0.3333333333333333", 0, true, Float(1.0 / 3.0), 1.0 / 3.0)),
        ("doubleWhole", { $0.set(2.0, forKey: $1) }, Reads("2.0", 2, true, 2, 2)),
        ("doubleNegative", { $0.set(-2.7, forKey: $1) }, Reads("-2.7", -2, true, -2.7, -2.7)),
        ("doubleNegativeZero", { $0.set(-0.0, forKey: $1) }, Reads("-0.0", 0, false, -0.0, -0.0)),
        ("doubleTenBillion", { $0.set(1e10, forKey: $1) }, Reads("10000000000.0", 10_000_000_000, true, 1e10, 1e10)),
        // Out of Int's range: Foundation on x86_64 Linux says Int.min (C leaves it undefined); an iPhone saturates.
        ("doubleHuge", { $0.set(1e20, forKey: $1) }, Reads("1e+20", .max, true, 1e20, 1e20)),
        ("nan", { $0.set(Double.nan, forKey: $1) }, Reads("nan", 0, true, .nan, .nan)),
        ("infinity", { $0.set(Double.infinity, forKey: $1) }, Reads("inf", .max, true, .infinity, .infinity)),
        ("minusInfinity", { $0.set(-Double.infinity, forKey: $1) }, Reads("-inf", .min, true, -.infinity, -.infinity)),
        ("int", { $0.set(42, forKey: $1) }, Reads("42", 42, true, 42, 42)),
        ("intNegative", { $0.set(-7, forKey: $1) }, Reads("-7", -7, true, -7, -7)),
        ("int64Min", { $0.set(Int64.min, forKey: $1) }, Reads("-9223372036854775808", .min, true, Float(Int64.min), Double(Int64.min))),
        ("true", { $0.set(true, forKey: $1) }, Reads("1", 1, true, 1, 1)),
        ("false", { $0.set(false, forKey: $1) }, Reads("0", 0, false, 0, 0)),
        ("string1234", { $0.set("12.34", forKey: $1) }, Reads("12.34", 12, true, 12.34, 12.34)),
        ("stringYES", { $0.set("YES", forKey: $1) }, Reads("YES", 0, true, 0, 0)),
        ("stringAbc", { $0.set("abc", forKey: $1) }, Reads("abc", 0, false, 0, 0)),
        ("stringBlank7x", { $0.set(" 7x", forKey: $1) }, Reads(" 7x", 7, true, 7, 7)),
        ("stringHuge", { $0.set("99999999999999999999", forKey: $1) }, Reads("99999999999999999999", .max, true, 1e20, 1e20)),
        ("stringHugeNegative", { $0.set("-99999999999999999999", forKey: $1) }, Reads("-99999999999999999999", .min, true, -1e20, -1e20)),
        (
            "stringExact", { $0.set("9007199254740993", forKey: $1) },
            Reads("9007199254740993", 9_007_199_254_740_993, true, 9.007199e15, 9_007_199_254_740_992)
        ),
        ("stringExponent", { $0.set("1e3", forKey: $1) }, Reads("1e3", 1, true, 1000, 1000)),
        ("stringHex", { $0.set("0x10", forKey: $1) }, Reads("0x10", 0, false, 0, 0)),
        ("stringInf", { $0.set("inf", forKey: $1) }, Reads("inf", 0, false, 0, 0)),
        ("stringNaN", { $0.set("nan", forKey: $1) }, Reads("nan", 0, false, 0, 0)),
        ("stringHalf", { $0.set("  -0.5", forKey: $1) }, Reads("  -0.5", 0, false, -0.5, -0.5)),
        ("stringPoint5", { $0.set(".5", forKey: $1) }, Reads(".5", 0, false, 0.5, 0.5)),
        ("stringFive", { $0.set("5.", forKey: $1) }, Reads("5.", 5, true, 5, 5)),
        ("stringPlus", { $0.set("+5", forKey: $1) }, Reads("+5", 5, true, 5, 5)),
        ("stringOverflowingExponent", { $0.set("1e400", forKey: $1) }, Reads("1e400", 1, true, .infinity, .infinity)),
        ("stringComma", { $0.set("1,5", forKey: $1) }, Reads("1,5", 1, true, 1, 1)),
    ]

    @Test func readsAsFoundation() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        for row in Self.table { row.set(defaults, row.key) }
        for row in Self.table {
            #expect(Reads(defaults, row.key) == row.reads, "\(row.key)")
        }
    }

    /// What `object(forKey:)` hands out keeps a Float's kind: its text is
    /// the Float's, and it bridges to Float and to Double as NSNumber does.
    @Test func aFloatReadsBackAsAFloatNumber() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.set(Float(12.34), forKey: "volume")
        defaults.set(12.34, forKey: "ratio")
        let volume = try #require(defaults.object(forKey: "volume") as? NSNumber)
        #expect("\(volume)" == "12.34")
        #expect(defaults.object(forKey: "volume") as? Float == 12.34)
        #expect(defaults.object(forKey: "volume") as? Double == Double(Float(12.34)))
        #expect(defaults.object(forKey: "ratio") as? Double == 12.34)
        #expect("\(defaults.object(forKey: "ratio")!)" == "12.34")
        #expect(defaults.dictionaryRepresentation()["volume"].map { "\($0)" } == "12.34")
        #expect(defaults.array(forKey: "absent") == nil)
    }

    /// Foundation on Linux stores an unsigned integer above Int64.max and
    /// then reads it as nil and 0; a property list has no such integer here:
    /// the write is refused, loudly, and nothing changes.
    @Test func anUnsignedIntegerAboveInt64MaxIsRefused() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.set(UInt64.max, forKey: "big")
        #expect(defaults.object(forKey: "big") == nil)
        defaults.set(UInt64(Int64.max), forKey: "fits")
        #expect(defaults.integer(forKey: "fits") == .max)
    }
}
