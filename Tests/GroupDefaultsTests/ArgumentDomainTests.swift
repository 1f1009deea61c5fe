import Foundation
import PropertyList
import Testing

@testable import GroupDefaults

@Suite struct ArgumentDomainTests {
    /// Parses, collecting the warnings instead of printing them.
    static func parse(_ arguments: [String]) -> (domain: [String: PlistValue], warnings: [Diagnostic]) {
        var warnings: [Diagnostic] = []
        let domain = ArgumentDomain.parse(arguments) { warnings.append($0) }
        return (domain, warnings)
    }

    @Test func aPlainValueIsAString() {
        let (domain, warnings) = Self.parse(["-flag", "YES", "-n", "5"])
        #expect(domain["flag"] == .string("YES"))
        #expect(Conversions.bool(domain["flag"]) == true)
        #expect(domain["n"] == .string("5"))
        #expect(Conversions.integer(domain["n"]) == 5)
        #expect(warnings.isEmpty)
    }

    @Test func valuesThatLookLikePropertyListsAreParsed() {
        let (domain, _) = Self.parse([
            "-list", "(a, b)", "-map", "{ k = v; }", "-quoted", "\"two words\"", "-bytes", "<00ff>", "-square", "[x]",
        ])
        #expect(domain["list"] == ["a", "b"])
        #expect(domain["map"] == ["k": "v"])
        #expect(domain["quoted"] == "two words")
        #expect(domain["bytes"] == .data(Data([0, 255])))
        #expect(domain["square"] == ["x"])
    }

    @Test func xmlValuesKeepTheirTypes() {
        let xml = String(decoding: XMLPropertyList.encode(["n": 5, "b": true]), as: UTF8.self)
        #expect(Self.parse(["-config", xml]).domain["config"] == ["n": 5, "b": true])
    }

    @Test func xmlFragmentsAreValuesOfTheirType() {
        let (domain, warnings) = Self.parse([
            "-count", "<integer>5</integer>", "-on", "<true/>", "-off", "<false/>", "-ratio", "<real>0.5</real>",
            "-names", "<array><string>a</string><string>b</string></array>", "-hex", "<abcd>",
        ])
        #expect(domain["count"] == .integer(5))
        #expect(domain["on"] == .bool(true))
        #expect(domain["off"] == .bool(false))
        #expect(domain["ratio"] == .real(0.5))
        #expect(domain["names"] == ["a", "b"])
        #expect(domain["hex"] == .data(Data([0xAB, 0xCD])))
        #expect(warnings.isEmpty)
    }

    @Test func aValueStartingWithADashIsTheNextKeyNotAValue() {
        #expect(Self.parse(["-verbose", "-theme", "dark"]).domain == ["theme": "dark"])
        #expect(Self.parse(["-neg", "-7"]).domain == [:])
        #expect(Self.parse(["-a", "-b", "-c", "x"]).domain == ["c": "x"])
    }

    @Test func valuesAreTrimmed() {
        let (domain, warnings) = Self.parse(["-theme", "  dark \n", "-list", "\t(a, b) ", "-count", " <integer>3</integer>\n"])
        #expect(domain["theme"] == "dark")
        #expect(domain["list"] == ["a", "b"])
        #expect(domain["count"] == .integer(3))
        #expect(warnings.isEmpty)
    }

    @Test func wordsThatAreNotKeysAreSkipped() {
        #expect(Self.parse(["positional", "-key", "value", "-dangling"]).domain == ["key": "value"])
    }

    @Test func theLastOccurrenceWins() {
        #expect(Self.parse(["-k", "1", "-k", "2"]).domain == ["k": "2"])
    }

    @Test func aBrokenPropertyListIsKeptAsAStringWithAWarning() {
        let (domain, warnings) = Self.parse(["-list", " (a, b", "-xml", "<integer>5</real>", "-other", "fine"])
        #expect(domain["list"] == "(a, b")
        #expect(domain["xml"] == "<integer>5</real>")
        #expect(domain["other"] == "fine")
        #expect(warnings.count == 2)
        #expect(warnings.allSatisfy { $0.kind == .launchArgumentKeptAsString })
        #expect(warnings.first.map { "\($0)".contains("-list") && "\($0)".contains("line 1") } == true)
        #expect(warnings.last.map { "\($0)".contains("-xml") } == true)
    }

    @Test func aProcessLaunchesWhateverItsArguments() {
        let process = ProcessDomains()
        process.setLaunchArguments(["-broken", "{ unterminated"])
        #expect(process.volatileDomain(named: "NSArgumentDomain") == ["broken": "{ unterminated"])
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

    @Test func fileURLsAreStoredAsTheirPath() throws {
        let inHome = URL(fileURLWithPath: NSHomeDirectory() + "/Documents/a b.txt")
        #expect(Conversions.storedForm(of: inHome) == .string("~/Documents/a b.txt"))
        #expect(Conversions.url(Conversions.storedForm(of: inHome))?.path == inHome.path)
        #expect(Conversions.storedForm(of: URL(fileURLWithPath: "/etc/hosts")) == .string("/etc/hosts"))
        let web = URL(string: "https://example.com/?q=1")!
        #expect(Conversions.storedForm(of: web).dataValue != nil, "an archive")
        #expect(Conversions.url(Conversions.storedForm(of: web)) == web)
    }

    @Test func urlsRoundTripWhole() throws {
        let url = URL(string: "https://example.com/a/b?x=1&y=2#frag")!
        #expect(Conversions.url(Conversions.archive(url)) == url)
        #expect(Conversions.url(.string("/tmp/file")) == URL(fileURLWithPath: "/tmp/file"))
        #expect(Conversions.url(.string("https://example.com")) == URL(string: "https://example.com"))
    }
}
