import Foundation
import Testing

@testable import PropertyList

@Suite struct BinaryPropertyListTests {
    static let sample: PlistValue = [
        "string": "hello",
        "unicode": "héllo ✓ 🎉",
        "empty": "",
        "zero": 0, "small": 200, "medium": 60_000, "large": 4_000_000_000, "negative": -5,
        "min": .integer(Int64.min), "max": .integer(Int64.max),
        "real": 1.5, "negativeReal": -0.25,
        "true": true, "false": false,
        "date": .date(Date(timeIntervalSinceReferenceDate: 123_456.5)),
        "data": .data(Data([0, 1, 2, 255])),
        "array": [1, "two", [3.0, false]],
        "dictionary": ["nested": ["deeper": "value"], "count": 3],
        "long": .array((0..<300).map { .integer(Int64($0)) }),
    ]

    @Test func roundTripsEveryType() throws {
        let decoded = try BinaryPropertyList.decode(BinaryPropertyList.encode(Self.sample))
        #expect(decoded == Self.sample)
    }

    /// A file allowed past a suite's 16 MiB (a device's iCloud store copy)
    /// may hold as many values as it has bytes; a suite's stays at the fixed count.
    @Test func aLargerFileMayHoldMoreValues() throws {
        let many = PlistValue.array(Array(repeating: .bool(true), count: PlistLimits.maximumValueCount + 1))
        let bytes = BinaryPropertyList.encode(many)
        #expect(throws: PropertyListError.self) { try BinaryPropertyList.decode(bytes) }
        #expect(bytes.count > PlistLimits.maximumFileSize)
        #expect(try BinaryPropertyList.decode(bytes, maximumSize: bytes.count) == many)
        #expect(throws: PropertyListError.self) { try BinaryPropertyList.decode(bytes, maximumSize: bytes.count - 1) }
    }

    @Test func keepsBoolAndIntegerApart() throws {
        let value: PlistValue = ["flag": true, "one": 1, "realOne": 1.0]
        let decoded = try BinaryPropertyList.decode(BinaryPropertyList.encode(value))
        #expect(decoded.dictionaryValue?["flag"] == .bool(true))
        #expect(decoded.dictionaryValue?["one"] == .integer(1))
        #expect(decoded.dictionaryValue?["realOne"] == .real(1.0))
    }

    @Test func largeCollectionsUseWideReferences() throws {
        var dictionary: [String: PlistValue] = [:]
        for index in 0..<70_000 { dictionary["key-\(index)"] = .integer(Int64(index)) }
        let value = PlistValue.dictionary(dictionary)
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(value)) == value)
    }

    @Test func foundationReadsWhatWeWrite() throws {
        let data = BinaryPropertyList.encode(Self.sample)
        let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        #expect(try PlistValue(any: object) == Self.sample)
    }

    @Test func weReadWhatFoundationWrites() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: Self.sample.foundationValue, format: .binary, options: 0)
        #expect(try BinaryPropertyList.decode(data) == Self.sample)
    }

    @Test func rejectsTruncatedData() throws {
        let data = BinaryPropertyList.encode(Self.sample)
        for length in [0, 7, 8, 39, data.count / 2, data.count - 1] {
            #expect(throws: PropertyListError.self) { try BinaryPropertyList.decode(data.prefix(length)) }
        }
    }

    @Test func rejectsAnArrayThatContainsItself() throws {
        // bplist00, object 0 = array of one ref -> object 0.
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xA1, 0x00]
        let offsetTable = bytes.count
        bytes += [0x08]
        bytes +=
            [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0, 0, 0, 0, 0, UInt8(offsetTable)]
        #expect(throws: PropertyListError.self) { try BinaryPropertyList.decode(Data(bytes)) }
    }

    /// Flipped bytes must give a value or a `PropertyListError`, never a crash
    /// or a hang (the time limit); what decodes must survive a round trip.
    /// Seeded, so a failure names the round that reproduces it.
    @Test(.timeLimit(.minutes(1))) func survivesRandomCorruption() throws {
        let original = [UInt8](BinaryPropertyList.encode(Self.sample))
        var generator = SplitMix64(seed: 0x67_726f_7570)
        var decoded = 0
        var refused = 0
        for round in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            do {
                let value = try BinaryPropertyList.decode(Data(bytes))
                #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(value)) == value, "round \(round)")
                decoded += 1
            } catch is PropertyListError {
                refused += 1
            } catch {
                Issue.record("round \(round): \(type(of: error)) is not a PropertyListError: \(error)")
            }
        }
        // Both outcomes occur: the corruption reaches the structure and the payload.
        #expect(decoded > 0 && refused > 0)
    }

    /// The writer orders keys by their first 16 bytes where it can; the order
    /// must still be `String`'s `<` exactly: shared prefixes longer than 16
    /// bytes, keys ending inside another, NULs, non-ASCII and decomposed keys.
    @Test func writesKeysInStringOrder() {
        var keys: Set<String> = [
            "", "a", "a\0", "a\0b", "b", "B", "abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmno",
            "com.example.settings", "com.example.settings.alpha", "com.example.settings.beta", "com.example.settingsZ",
            "é", "e\u{301}x", "Zürich", "Zurich", "日本", "🎉", "~", "\u{7F}", "abcdefgh\u{80}",
        ]
        var random = SplitMix64(seed: 21)
        let alphabet = Array("ab.-_Zé\0")
        while keys.count < 400 {
            let length = random.next(below: 40)
            keys.insert(String((0..<length).map { _ in alphabet[random.next(below: alphabet.count)] }))
        }
        let dictionary = Dictionary(uniqueKeysWithValues: keys.map { ($0, PlistValue.bool(true)) })
        let written = KeyOrder.sorted(dictionary).map { dictionary[$0].key }
        #expect(written == dictionary.keys.sorted())
    }

    /// The same contents give the same bytes, however the dictionary was built.
    @Test func theSameContentsGiveTheSameBytes() throws {
        let pairs = (0..<300).map { ("key-\($0)", PlistValue.array([.integer(Int64($0)), ["nested-\($0)": .string("v")]])) }
        var grown: [String: PlistValue] = [:]
        for (key, value) in pairs.reversed() { grown[key] = value }
        let reserved = Dictionary(uniqueKeysWithValues: pairs)
        let bytes = BinaryPropertyList.encode(.dictionary(reserved))
        #expect(BinaryPropertyList.encode(.dictionary(grown)) == bytes)
        #expect(try BinaryPropertyList.decode(bytes) == .dictionary(reserved))
    }

    /// The writer uses a work list, not recursion: the deepest value a reader
    /// accepts is written and read back, and a deeper one is written and refused.
    @Test func writesDeepValuesWithoutRecursion() throws {
        func chain(_ depth: Int) -> PlistValue {
            var value = PlistValue.dictionary(["leaf": true])
            for level in 1..<depth { value = level.isMultiple(of: 2) ? .array([value]) : .dictionary(["level": value]) }
            return value
        }
        let deepest = chain(PlistLimits.maximumDepth)
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(deepest)) == deepest)
        #expect(throws: PropertyListError.self) { try BinaryPropertyList.decode(BinaryPropertyList.encode(chain(PlistLimits.maximumDepth + 1))) }
    }
}

@Suite struct XMLPropertyListTests {
    @Test func roundTripsThroughOurWriterAndFoundationsReader() throws {
        let value = BinaryPropertyListTests.sample
        var expected = value.dictionaryValue!
        // XML dates have whole seconds.
        expected["date"] = .date(Date(timeIntervalSinceReferenceDate: 123_456))
        let decoded = try XMLPropertyList.decode(XMLPropertyList.encode(.dictionary(expected)))
        #expect(decoded == .dictionary(expected))
    }

    @Test func escapesMarkup() throws {
        let value: PlistValue = ["a<b": "x & y > z"]
        #expect(try XMLPropertyList.decode(XMLPropertyList.encode(value)) == value)
    }

    @Test func detectsFormats() throws {
        let value: PlistValue = ["k": "v"]
        #expect(try PropertyListFormat.decode(XMLPropertyList.encode(value)).format == .xml)
        #expect(try PropertyListFormat.decode(BinaryPropertyList.encode(value)).format == .binary)
        #expect(throws: PropertyListError.unrecognizedFormat) { try PropertyListFormat.decode(Data("hello".utf8)) }
        #expect(throws: PropertyListError.rootNotDictionary(found: "array")) {
            try PropertyListFormat.decodeDictionary(BinaryPropertyList.encode(["a"]))
        }
    }
}

@Suite struct OldStylePropertyListTests {
    @Test func parsesTheOldStyleForms() throws {
        #expect(try OldStylePropertyList.parse("(a, b, \"c d\")") == ["a", "b", "c d"])
        #expect(try OldStylePropertyList.parse("{ a = 1; b = (x); }") == ["a": "1", "b": ["x"]])
        #expect(try OldStylePropertyList.parse("<0aff>") == .data(Data([0x0A, 0xFF])))
        #expect(try OldStylePropertyList.parse("\"tab\\there\"") == "tab\there")
        #expect(try OldStylePropertyList.parse("( /* comment */ a, // line\n b, )") == ["a", "b"])
        #expect(try OldStylePropertyList.parse("()") == [])
    }

    @Test func parsesXML() throws {
        let xml = String(decoding: XMLPropertyList.encode(["n": 5]), as: UTF8.self)
        #expect(try OldStylePropertyList.parse(xml) == ["n": 5])
    }

    @Test func reportsLineAndColumn() {
        #expect(throws: PropertyListError.syntax(line: 2, column: 8, reason: "expected ';' after the value of \"a\"")) {
            try OldStylePropertyList.parse("{\n a = b c; }")
        }
        #expect(throws: PropertyListError.self) { try OldStylePropertyList.parse("(a, b") }
        #expect(throws: PropertyListError.self) { try OldStylePropertyList.parse("<0g>") }
    }

    @Test func describeQuotesOnlyWhatNeedsIt() {
        let text = OldStylePropertyList.describe(["plain": "word", "spaced": "two words", "n": 3])
        #expect(text == "{\n    n = 3;\n    plain = word;\n    spaced = \"two words\";\n}")
    }
}
