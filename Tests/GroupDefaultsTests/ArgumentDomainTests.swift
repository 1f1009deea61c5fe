import Foundation
import Testing
@testable import GroupDefaults
import PropertyList

@Suite struct ArgumentDomainTests {
    @Test func aPlainValueIsAString() throws {
        let domain = try ArgumentDomain.parse(["-flag", "YES", "-n", "5"])
        #expect(domain["flag"] == .string("YES"))
        #expect(Conversions.bool(domain["flag"]) == true)
        #expect(domain["n"] == .string("5"))
        #expect(Conversions.integer(domain["n"]) == 5)
    }

    @Test func valuesThatLookLikePropertyListsAreParsed() throws {
        let domain = try ArgumentDomain.parse([
            "-list", "(a, b)", "-map", "{ k = v; }", "-quoted", "\"two words\"", "-bytes", "<00ff>", "-square", "[x]",
        ])
        #expect(domain["list"] == ["a", "b"])
        #expect(domain["map"] == ["k": "v"])
        #expect(domain["quoted"] == "two words")
        #expect(domain["bytes"] == .data(Data([0, 255])))
        #expect(domain["square"] == ["x"])
    }

    @Test func xmlValuesKeepTheirTypes() throws {
        let xml = String(decoding: XMLPropertyList.encode(["n": 5, "b": true]), as: UTF8.self)
        let domain = try ArgumentDomain.parse(["-config", xml])
        #expect(domain["config"] == ["n": 5, "b": true])
    }

    @Test func wordsThatAreNotKeysAreSkipped() throws {
        let domain = try ArgumentDomain.parse(["positional", "-key", "value", "-dangling"])
        #expect(domain == ["key": "value"])
    }

    @Test func theLastOccurrenceWins() throws {
        #expect(try ArgumentDomain.parse(["-k", "1", "-k", "2"]) == ["k": "2"])
    }

    @Test func aBrokenPropertyListNamesTheKey() {
        #expect(throws: DefaultsError.self) { try ArgumentDomain.parse(["-list", "(a, b"]) }
        do {
            _ = try ArgumentDomain.parse(["-list", "(a, b"])
        } catch {
            #expect("\(error)".contains("-list"))
            #expect("\(error)".contains("line 1"))
        }
    }
}

@Suite struct ConversionTests {
    @Test func boolReadsStringsAsNSStringDoes() {
        for text in ["YES", "yes", "true", "T", "1", "  7", "+1"] { #expect(Conversions.bool(.string(text)) == true, "\(text)") }
        for text in ["NO", "no", "false", "0", "", "abc", "00"] { #expect(Conversions.bool(.string(text)) == false, "\(text)") }
        #expect(Conversions.bool(nil) == nil)
        #expect(Conversions.bool(.integer(2)) == true)
    }

    @Test func numbersFromStringsAndBools() {
        #expect(Conversions.integer(.string("42abc")) == 42)
        #expect(Conversions.integer(.string("x")) == 0)
        #expect(Conversions.integer(.real(3.9)) == 3)
        #expect(Conversions.integer(.bool(true)) == 1)
        #expect(Conversions.double(.string("2.5")) == 2.5)
        #expect(Conversions.integer(.array([])) == nil)
    }

    @Test func stringOfNumbers() {
        #expect(Conversions.string(.integer(5)) == "5")
        #expect(Conversions.string(.bool(true)) == "1")
        #expect(Conversions.string(.data(Data())) == nil)
    }

    @Test func urlsRoundTripWhole() throws {
        let url = URL(string: "https://example.com/a/b?x=1&y=2#frag")!
        #expect(Conversions.url(Conversions.archive(url)) == url)
        #expect(Conversions.url(.string("/tmp/file")) == URL(fileURLWithPath: "/tmp/file"))
        #expect(Conversions.url(.string("https://example.com")) == URL(string: "https://example.com"))
    }
}
