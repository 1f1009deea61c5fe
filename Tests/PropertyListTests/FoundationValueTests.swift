import Foundation
import PropertyList
import Testing

/// `PlistValue(any:)` takes what Foundation bridges to a property list.
@Suite struct FoundationValueTests {
    @Test func everyIntegerAndRealType() throws {
        #expect(try PlistValue(any: UInt16(7)) == .integer(7))
        #expect(try PlistValue(any: Int8(-3)) == .integer(-3))
        #expect(try PlistValue(any: UInt(42)) == .integer(42))
        #expect(try PlistValue(any: UInt64(Int64.max)) == .integer(.max))
        #expect(try PlistValue(any: Float(0.5)) == .real(0.5))
        #expect(try PlistValue(any: CGFloat(1.5)) == .real(1.5))
        #expect(try PlistValue(any: [UInt32(1), UInt32(2)] as [Any]) == [1, 2])
    }

    @Test func anIntegerBeyondSixtyFourBitsIsNamed() {
        #expect(throws: PropertyListError.integerOutOfRange(path: "list[1]", value: "18446744073709551615")) {
            try PlistValue(any: [UInt64(1), UInt64.max] as [Any], path: "list")
        }
    }

    @Test func optionalsAreTheirValueAndNilIsNotAPropertyList() throws {
        func boxed<T>(_ value: T) -> Any { value }
        #expect(try PlistValue(any: boxed(Optional("x"))) == "x")
        #expect(try PlistValue(any: boxed(Optional(Optional(3)))) == .integer(3))
        #expect(throws: PropertyListError.self) { try PlistValue(any: boxed(Optional<String>.none)) }
        do {
            _ = try PlistValue(any: ["a": ["b", nil]] as [String: [String?]], path: "key")
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("key.a[1]"))
        }
    }

    @Test func booleansStayBooleansAndNumbersKeepTheirKind() throws {
        #expect(try PlistValue(any: true) == .bool(true))
        #expect(try PlistValue(any: NSNumber(value: true)) == .bool(true))
        #expect(try PlistValue(any: NSNumber(value: 2.0)) == .real(2))
        #expect(try PlistValue(any: NSNumber(value: 2)) == .integer(2))
    }
}
