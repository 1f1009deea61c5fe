import Foundation
import Testing

@testable import PropertyList

@Suite struct OldStyleNestingTests {
    @Test func nestingIsLimitedTo512WithAPosition() throws {
        #expect(try OldStylePropertyList.parse(String(repeating: "(", count: 512) + String(repeating: ")", count: 512)).nestingDepth() == 512)
        #expect(throws: PropertyListError.syntax(line: 1, column: 513, reason: "the value nests arrays and dictionaries deeper than 512")) {
            try OldStylePropertyList.parse(String(repeating: "(", count: 513) + String(repeating: ")", count: 513))
        }
    }

    @Test func tenThousandLevelsAreAnErrorNotACrash() {
        let deep = String(repeating: "{a=", count: 10_000) + "x" + String(repeating: ";}", count: 10_000)
        #expect(throws: PropertyListError.syntax(line: 1, column: 1537, reason: "the value nests arrays and dictionaries deeper than 512")) {
            try OldStylePropertyList.parseValueArgument(deep)
        }
        #expect(throws: PropertyListError.self) { try OldStylePropertyList.parseValueArgument(String(repeating: "[", count: 10_000)) }
    }

    @Test func anOctalEscapeAboveAByteIsAnError() throws {
        #expect(throws: PropertyListError.syntax(line: 1, column: 6, reason: "octal escape \\777 is larger than \\377")) {
            try OldStylePropertyList.parse("\"\\777\"")
        }
        #expect(try OldStylePropertyList.parse("\"\\101\"") == "A")
    }

    @Test func aStringThatLooksLikeACommentIsPrintedQuoted() throws {
        for text in ["//777", "/*x", "a//b"] {
            #expect(try OldStylePropertyList.parse(OldStylePropertyList.describe(["k": .string(text)])) == ["k": .string(text)])
        }
        #expect(OldStylePropertyList.describe("a/b") == "a/b")
    }

    @Test func whatDescribePrintsParsesBack() throws {
        var value: PlistValue = ["leaf": "a b", "data": .data(Data([1, 2]))]
        for _ in 0..<511 { value = [value] }
        #expect(try OldStylePropertyList.parse(OldStylePropertyList.describe(value)) == value)
    }
}

@Suite struct PlistValueEqualityTests {
    @Test func nanEqualsItselfAndHashesAlike() {
        let nan = PlistValue.real(.nan)
        #expect(nan == nan)
        #expect(nan.hashValue == PlistValue.real(.nan).hashValue)
        let suite: PlistValue = ["ratio": nan, "list": [nan, 1]]
        #expect(suite == ["ratio": .real(.nan), "list": [.real(.nan), 1]])
        #expect(Set([nan, nan, suite, suite]).count == 2)
        let nanDate = PlistValue.date(Date(timeIntervalSinceReferenceDate: .nan))
        #expect(nanDate == nanDate)
        #expect(nanDate.hashValue == PlistValue.date(Date(timeIntervalSinceReferenceDate: .nan)).hashValue)
    }

    @Test func realsCompareByTheirBits() {
        #expect(PlistValue.real(0.0) != .real(-0.0))
        #expect(Set([PlistValue.real(0.0), .real(-0.0)]).count == 2)
        #expect(PlistValue.real(1.5) == .real(1.5))
        #expect(PlistValue.real(1) != .integer(1))
        #expect(PlistValue.bool(true) != .integer(1))
    }

    @Test func aSuiteHoldingNaNSurvivesAFileRoundTripUnchanged() throws {
        let suite: PlistValue = ["ratio": .real(.nan), "when": .date(Date(timeIntervalSinceReferenceDate: 5))]
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(suite)) == suite)
        #expect(try XMLPropertyList.decode(XMLPropertyList.encode(suite)) == suite)
    }
}
