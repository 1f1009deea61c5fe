import Foundation
import Testing

@testable import PropertyList

@Suite struct XMLReaderTests {
    static let sampleXML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>name</key>
        \t<string>héllo &amp; &lt;you&gt; &#x1F389;</string>
        \t<key>count</key>
        \t<integer>-42</integer>
        \t<key>ratio</key>
        \t<real>0.5</real>
        \t<key>on</key>
        \t<true/>
        \t<key>when</key>
        \t<date>2026-11-22T03:00:00Z</date>
        \t<key>bytes</key>
        \t<data>
        \tAAEC
        \t/w==
        \t</data>
        \t<key>list</key>
        \t<array><string/><!-- a comment --><false/></array>
        </dict>
        </plist>

        """

    static let sampleValue: PlistValue = [
        "name": "héllo & <you> 🎉", "count": -42, "ratio": 0.5, "on": true,
        "when": .date(Date(timeIntervalSince1970: 1_795_316_400)), "bytes": .data(Data([0, 1, 2, 255])), "list": ["", false],
    ]

    func expectInvalid(
        _ text: String, line: Int, column: Int? = nil, containing reason: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectInvalid(Data(text.utf8), line: line, column: column, containing: reason, sourceLocation: sourceLocation)
    }

    func expectInvalid(
        _ data: Data, line: Int, column: Int? = nil, containing reason: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let value = try XMLPropertyList.decode(data)
            Issue.record("decoded \(value) instead of failing", sourceLocation: sourceLocation)
        } catch let PropertyListError.invalidXML(foundLine, foundColumn, foundReason) {
            #expect(foundLine == line, "\(foundReason)", sourceLocation: sourceLocation)
            if let column { #expect(foundColumn == column, "\(foundReason)", sourceLocation: sourceLocation) }
            #expect(foundReason.contains(reason), "\(foundReason)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func readsEveryElement() throws {
        #expect(try XMLPropertyList.decode(Data(Self.sampleXML.utf8)) == Self.sampleValue)
        #expect(try XMLPropertyList.decode(Data("<plist><string><![CDATA[a<b]]>&#65;</string></plist>".utf8)) == "a<bA")
    }

    @Test func readsWhatFoundationWrites() throws {
        let value = BinaryPropertyListTests.sample
        var expected = value.dictionaryValue!
        expected["date"] = .date(Date(timeIntervalSinceReferenceDate: 123_456))
        let data = try PropertyListSerialization.data(fromPropertyList: PlistValue.dictionary(expected).foundationValue, format: .xml, options: 0)
        #expect(try XMLPropertyList.decode(data) == .dictionary(expected))
    }

    @Test func foundationReadsWhatWeWrite() throws {
        let data = XMLPropertyList.encode(Self.sampleValue)
        let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        #expect(try PlistValue(any: object) == Self.sampleValue)
    }

    @Test(arguments: [true, false]) func readsUTF16WithAByteOrderMark(bigEndian: Bool) throws {
        let text = Self.sampleXML.replacingOccurrences(of: "UTF-8", with: "UTF-16")
        var data = Data(bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE])
        data.append(text.data(using: bigEndian ? .utf16BigEndian : .utf16LittleEndian)!)
        #expect(XMLPropertyList.isXML(data))
        #expect(try PropertyListFormat.decode(data).format == .xml)
        #expect(try XMLPropertyList.decode(data) == Self.sampleValue)
    }

    @Test func anUnpairedSurrogateInUTF16IsAnError() {
        func littleEndian(_ units: [UInt16]) -> [UInt8] { units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
        let units: [UInt16] = Array("<plist><string>".utf16) + [0xD800] + Array("</string></plist>".utf16)
        let data = Data([0xFF, 0xFE] + littleEndian(units))
        expectInvalid(data, line: 1, containing: "unpaired surrogate")
    }

    @Test func invalidBase64IsAnErrorWithItsPosition() throws {
        expectInvalid("<plist>\n<data>AAEC\n  !!!notbase64</data></plist>", line: 3, column: 3, containing: "'!' is not a base64 character")
        expectInvalid("<plist><data>QUJD=QUJD</data></plist>", line: 1, containing: "misplaced '='")
        expectInvalid("<plist><data>QUJ</data></plist>", line: 1, containing: "incomplete group")
        expectInvalid("<plist><data>QQ==QQ==</data></plist>", line: 1, containing: "after '=' padding")
        #expect(try XMLPropertyList.decode(Data("<plist><data>QQ==</data></plist>".utf8)) == .data(Data("A".utf8)))
    }

    @Test func nestingIsLimitedTo512() throws {
        func nested(_ depth: Int) -> Data {
            Data(("<plist>\n" + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</plist>").utf8)
        }
        #expect(try XMLPropertyList.decode(nested(512)).nestingDepth() == 512)
        expectInvalid(nested(513), line: 2, column: 512 * 7 + 1, containing: "deeper than 512")
        expectInvalid(nested(100_000), line: 2, containing: "deeper than 512")
    }

    @Test func malformedDocumentsNameTheirLine() {
        expectInvalid("<plist>\n<dict>\n<key>a</key>\n</dict></plist>", line: 4, column: 1, containing: "key \"a\" has no value")
        expectInvalid("<plist><dict><key>a</key><true/><key>a</key><false/></dict></plist>", line: 1, containing: "appears twice")
        expectInvalid("<plist>\n<integer>12x</integer></plist>", line: 2, column: 1, containing: "not a whole number")
        expectInvalid("<plist><integer>9223372036854775808</integer></plist>", line: 1, containing: "does not fit in 64 bits")
        expectInvalid("<plist><real>one</real></plist>", line: 1, containing: "not a number")
        expectInvalid("<plist><date>2026-02-30T00:00:00Z</date></plist>", line: 1, containing: "not a date")
        expectInvalid("<plist><array><string>x</array></plist>", line: 1, containing: "expected </string>")
        expectInvalid("<plist><dict><string>x</string></dict></plist>", line: 1, containing: "expected <key>")
        expectInvalid("<plist><thing/></plist>", line: 1, containing: "unknown element <thing>")
        expectInvalid("<plist><string>a &nope; b</string></plist>", line: 1, containing: "unknown entity")
        expectInvalid("<plist><string>a</string><string>b</string></plist>", line: 1, containing: "expected </plist>")
        expectInvalid("<plist></plist>", line: 1, containing: "holds no value")
        expectInvalid("", line: 1, containing: "empty")
        expectInvalid(
            Data(
                [0x3C, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x3E, 0x3C, 0x73, 0x74, 0x72, 0x69, 0x6E, 0x67, 0x3E, 0xFF]
                    + Array("</string></plist>".utf8)), line: 1, containing: "not valid UTF-8")
    }

    @Test func integersRealsAndDatesInEveryForm() throws {
        func value(_ xml: String) throws -> PlistValue { try XMLPropertyList.decode(Data("<plist>\(xml)</plist>".utf8)) }
        #expect(try value("<integer>-9223372036854775808</integer>") == .integer(.min))
        #expect(try value("<integer> 0x10 </integer>") == 16)
        #expect(try value("<real>nan</real>") == .real(.nan))
        #expect(try value("<real>-infinity</real>") == .real(-.infinity))
        #expect(try value("<real>1e-05</real>") == .real(1e-05))
        for interval in [0, -1, 123_456, -63_114_076_800, 1e11, -1e12] as [Double] {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            #expect(try value("<date>\(XMLPropertyList.formatDate(date))</date>") == .date(date))
        }
        #expect(XMLPropertyList.formatDate(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00Z")
        // What the writer clamps to, the reader reads; nothing further (found by fuzzing).
        for extreme in [1e20, -1e20, .infinity] as [Double] {
            let text = XMLPropertyList.formatDate(Date(timeIntervalSinceReferenceDate: extreme))
            #expect(try value("<date>\(text)</date>") == .date(Date(timeIntervalSinceReferenceDate: extreme < 0 ? -1e14 : 1e14)))
        }
        expectInvalid("<plist><date>-009999901-01-01T00:00:00Z</date></plist>", line: 1, containing: "more than 3 million years")
        #expect(XMLPropertyList.formatDate(Date(timeIntervalSinceReferenceDate: 1.75)) == "2001-01-01T00:00:01Z")
    }

    @Test func barePlistValuesAndOldStyleXMLAreRead() throws {
        #expect(try XMLPropertyList.decode(Data("<?xml version=\"1.0\"?><dict><key>a</key><integer>1</integer></dict>".utf8)) == ["a": 1])
        #expect(try OldStylePropertyList.parse("<plist><array><string>x</string></array></plist>") == ["x"])
    }
}
