import Foundation
import PropertyBased
import Synchronization
import Testing

@testable import PropertyList

/// The strict JSON reader of the line protocols and the `$date` text: values
/// read back exactly as written, or are refused saying what and where.
@Suite struct PlistJSONTests {
    func refusal(_ text: String) -> String {
        do {
            let value = try PlistJSON.parse(text)
            return "accepted as \(value)"
        } catch {
            return error.description
        }
    }

    func refusal(bytes: [UInt8]) -> String {
        do {
            let value = try PlistJSON.parse(bytes)
            return "accepted as \(value)"
        } catch {
            return error.description
        }
    }

    @Test func integersAreExactToTheEdgesOfInt64() throws {
        #expect(try PlistJSON.parse("9223372036854775807") == .integer(.max))
        #expect(try PlistJSON.parse("-9223372036854775808") == .integer(.min))
        #expect(try PlistJSON.parse("-1000000000000000000") == .integer(-1_000_000_000_000_000_000))
        #expect(try PlistJSON.parse(" -0 ") == .integer(0))
    }

    @Test func integersOutsideInt64AreRefusedNamingWhere() throws {
        #expect(refusal("18446744073709551615").hasPrefix("18446744073709551615 is outside the 64-bit integer range"))
        #expect(refusal("-9223372036854775809").hasPrefix("-9223372036854775809 is outside the 64-bit integer range"))
        #expect(refusal("[1, {\"n\": 9223372036854775808}]").hasPrefix("[1].n: 9223372036854775808 is outside"))
        // A well-formed object comes back with the error, so a protocol can still echo the id.
        do {
            _ = try PlistJSON.parseObject(#"{"id":7,"cmd":"increment","by":18446744073709551615}"#)
            Issue.record("accepted")
        } catch {
            #expect(error.description.hasPrefix("by: 18446744073709551615 is outside the 64-bit integer range"))
            #expect(error.offset == 31)
            #expect(error.partialObject?["id"] == .integer(7))
            #expect(error.partialObject?["by"] == .null)
        }
    }

    @Test func realsAreTheNearestDoubleAndOutOfRangeOnesAreRefused() throws {
        #expect(try PlistJSON.parse("0.1") == .real(0.1))
        #expect(try PlistJSON.parse("1e3") == .real(1000))
        #expect(try PlistJSON.parse("1E+3") == .real(1000))
        #expect(try PlistJSON.parse("5e-324") == .real(.leastNonzeroMagnitude))
        #expect(try PlistJSON.parse("1.7976931348623157e308") == .real(.greatestFiniteMagnitude))
        #expect(try PlistJSON.parse("0e999999") == .real(0))
        guard case .real(let negativeZero) = try PlistJSON.parse("-0.0") else {
            Issue.record("not a real")
            return
        }
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
        #expect(refusal("1e400").hasPrefix("1e400 is too large for a real"))
        #expect(refusal("-1e-400").hasPrefix("-1e-400 is too small for a real"))
        #expect(refusal("[" + String(repeating: "9", count: 400) + ".0]").hasPrefix("[0]: 9999999999999999999999999999999999999999… is too large"))
    }

    @Test func numbersFollowTheJSONGrammar() {
        for text in ["01", "1.", ".5", "+1", "1e", "1e+", "- 1", "NaN", "Infinity", "-Infinity", "1.e3", "--1"] {
            #expect(refusal(text).hasPrefix("invalid JSON at byte "), "\(text): \(refusal(text))")
        }
        #expect(refusal("0x10") == "unexpected text after the JSON value (at byte 1)")
    }

    @Test func stringsDecodeEscapesAndRefuseWhatIsNotText() throws {
        #expect(try PlistJSON.parse(#""a\u00e9\ud83d\ude00\n\t\"\\\/\u0000""#) == .string("aé😀\n\t\"\\/\u{0}"))
        #expect(try PlistJSON.parse(Array("\"é😀\"".utf8)) == .string("é😀"))
        for lone in [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""x\ud83d""#] {
            #expect(refusal(lone).contains("is half of a UTF-16 surrogate pair"), "\(lone): \(refusal(lone))")
        }
        #expect(refusal("\"a\u{01}b\"").hasPrefix("a control character (0x1) inside a string"))
        #expect(refusal("\"a\nb\"").hasPrefix("a control character (0xa) inside a string; write it as an escape such as \\n or \\u000a"))
        #expect(refusal(#""\x""#).hasPrefix("invalid JSON at byte 1: unknown escape"))
        #expect(refusal(#""\u12""#).hasPrefix("invalid JSON at byte "))
        #expect(refusal("\"open").hasPrefix("invalid JSON at byte 0: the string is not closed"))
        // Bytes that are not UTF-8: a stray continuation, an overlong form, an encoded surrogate, a cut sequence, past U+10FFFF.
        for bad: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xE2, 0x82, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
        ] {
            #expect(refusal(bytes: bad).contains("is not valid UTF-8"), "\(bad): \(refusal(bytes: bad))")
        }
        #expect(refusal(bytes: [0xEF, 0xBB, 0xBF, 0x31]).hasPrefix("invalid JSON at byte 0"))
    }

    @Test func nestingIsLimitedAndReportedAsSuch() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(try PlistJSON.parse(nested(512)) != .null)
        #expect(refusal(nested(513)).hasPrefix("the JSON value nests arrays and objects more than 512 deep, which no property-list reader accepts"))
        #expect(refusal(nested(200_000)).contains("more than 512 deep"))
        // A protocol line's fields may nest as deep as a property list; the line itself is one level more.
        #expect(try PlistJSON.parseObject(#"{"value":\#(nested(512))}"#)["value"] != nil)
        do {
            _ = try PlistJSON.parseObject(#"{"id":1,"value":\#(nested(513))}"#)
            Issue.record("accepted")
        } catch {
            #expect(
                error.description
                    == "value nests arrays and objects more than 512 deep, which no property-list reader accepts; flatten it (at byte 528)")
        }
        #expect(try PlistJSON.parseObject(#"{"card":[{"value":\#(nested(512))}]}"#, maximumFieldDepth: 514)["card"] != nil)
    }

    @Test func theNumberOfValuesIsLimited() {
        let count = PlistLimits.maximumValueCount
        let text = "[" + String(repeating: "0,", count: count) + "0]"
        #expect(refusal(text).hasPrefix("the JSON text holds more than \(count) values"))
    }

    @Test func repeatedKeysTrailingTextAndNonObjectsAreRefused() throws {
        #expect(refusal(#"{"a":1,"a":1}"#).hasPrefix(#"duplicate key "a" (each key may appear once)"#))
        #expect(refusal(#"{"v":{"x":[{"k":1,"k":2}]}}"#).hasPrefix(#"v.x[0]: duplicate key "k""#))
        // Keys that Swift strings hold equal (canonically equivalent) are the same key.
        #expect(refusal("{\"\u{e9}\":1,\"e\u{301}\":2}").hasPrefix("duplicate key"))
        // The problem reported is the earliest in the text, whichever was found first; a repeated key keeps its first value.
        #expect(refusal(#"{"a":1,"a":2,"b":1e999}"#) == #"duplicate key "a" (each key may appear once) (at byte 7)"#)
        #expect(refusal(#"{"b":1e999,"a":1,"a":2}"#).hasPrefix("b: "))
        do {
            _ = try PlistJSON.parse(#"{"a":1,"a":2,"c":"x"}"#)
            Issue.record("a repeated key was accepted")
        } catch {
            #expect(error.partialObject == ["a": .integer(1), "c": .string("x")])
        }
        #expect(refusal("{} {}").hasPrefix("unexpected text after the JSON value (at byte 3)"))
        #expect(refusal("").hasPrefix("invalid JSON at byte 0: the text is empty"))
        #expect(refusal("[1,]").hasPrefix("invalid JSON at byte 3: expected a value"))
        #expect(refusal("{\"a\" 1}").hasPrefix("invalid JSON at byte 5: expected ':' after the key"))
        #expect(refusal("[1 2]").hasPrefix("invalid JSON at byte 3: expected ',' or ']'"))
        #expect(refusal("[1").hasPrefix("invalid JSON at byte 2: the text ends inside an array opened at byte 0"))
        #expect(throws: PlistError.notAJSONObject(text: "[1]")) { try PlistJSON.parseObject("[1]") }
        #expect(try PlistJSON.parse(" \t\r\n{ \"a\" : [ true , false , null ] } \n") == .object(["a": .array([.bool(true), .bool(false), .null])]))
    }

    @Test func datesReadBackTheMillisecondsThatWereWritten() throws {
        // Every millisecond of a few seconds around 1970, 2001 and now, and a spread of years.
        var samples: [Int64] = []
        for base: Int64 in [0, PlistJSON.millisecondsFrom1970To2001, 1_714_564_800_000] { samples += (-1500..<1500).map { base + $0 } }
        samples += stride(from: -62_135_596_800_000, through: 253_402_300_799_999, by: 7_919_999_999_937).map { $0 }
        for milliseconds in samples {
            let date = Date(timeIntervalSinceReferenceDate: Double(milliseconds - PlistJSON.millisecondsFrom1970To2001) / 1000)
            let text = PlistJSON.timestamp(date)
            let read = try #require(PlistJSON.date(iso8601: text), "\(text)")
            #expect(read == date, "\(milliseconds): \(text)")
            #expect(PlistJSON.timestamp(read) == text)
        }
        #expect(PlistJSON.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(PlistJSON.timestamp(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(PlistJSON.timestamp(Date(timeIntervalSince1970: 1_714_564_800.678)) == "2024-05-01T12:00:00.678Z")
        #expect(PlistJSON.timestamp(Date(timeIntervalSince1970: 1_714_564_800.6786)) == "2024-05-01T12:00:00.679Z")
    }

    @Test func datesAcceptISO8601FormsAndRefuseDatesThatDoNotExist() throws {
        func text(_ input: String) -> String? { PlistJSON.date(iso8601: input).map(PlistJSON.timestamp) }
        #expect(text("2024-05-01T12:00:00.678Z") == "2024-05-01T12:00:00.678Z")
        #expect(text("2024-05-01T14:00:00+02:00") == "2024-05-01T12:00:00.000Z")
        #expect(text("2024-05-01T10:30:00-0130") == "2024-05-01T12:00:00.000Z")
        #expect(text("2024-05-01T12:00:00") == "2024-05-01T12:00:00.000Z")
        #expect(text("2024-05-01t12:00:00,5z") == "2024-05-01T12:00:00.500Z")
        #expect(text("2024-05-01T12:00:00.123456789Z") == "2024-05-01T12:00:00.123Z")
        #expect(text("2024-05-01") == "2024-05-01T00:00:00.000Z")
        #expect(text("2024-02-29") == "2024-02-29T00:00:00.000Z")
        #expect(text("2000-02-29") == "2000-02-29T00:00:00.000Z")
        #expect(text("0000-01-01T00:00:00Z") == "0000-01-01T00:00:00.000Z")
        #expect(text("+010000-01-01T00:00:00.001Z") == "+010000-01-01T00:00:00.001Z")
        #expect(text("-000001-12-31T23:59:59.999Z") == "-000001-12-31T23:59:59.999Z")
        for invalid in [
            "2024-02-30", "2023-02-29", "1900-02-29", "2024-13-01", "2024-00-10", "2024-05-00", "2024-05-01T24:00:00Z",
            "2024-05-01T12:60:00Z", "2024-05-01T12:00:60Z", "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00.1234567890Z",
            "2024-05-01 12:00:00Z", "24-05-01", "2024-5-1", "2024-05-01T12:00Z", "2024-05-01T12:00:00+2", "2024-05-01T12:00:00Zx",
            "", "yesterday", "+10000-01-01",
        ] {
            #expect(PlistJSON.date(iso8601: invalid) == nil, "\(invalid)")
        }
        let unrepresentable = PlistJSON.timestamp(Date(timeIntervalSinceReferenceDate: .nan))
        #expect(unrepresentable.hasPrefix("unrepresentable date"))
        #expect(PlistJSON.date(iso8601: unrepresentable) == nil)
        #expect(PlistJSON.timestamp(Date(timeIntervalSinceReferenceDate: 1e300)).hasPrefix("unrepresentable date"))
    }

    @Test func decodingMapsDatesAndDataAndRefusesNull() throws {
        let json = try PlistJSON.parse(#"{"d":{"$date":"2024-05-01T12:00:00.678Z"},"b":{"$data":"aGk="},"both":{"$date":"x","other":1},"gone":null}"#)
        let value = try PlistJSON.decode(json, droppingNulls: true)
        #expect(value.dictionaryValue?["b"] == .data(Data("hi".utf8)))
        #expect(value.dictionaryValue?["both"] == ["$date": "x", "other": 1])
        #expect(value.dictionaryValue?["gone"] == nil)
        #expect(PlistJSON.timestamp(try #require(value.dictionaryValue?["d"]?.dateValue)) == "2024-05-01T12:00:00.678Z")
        let null = PlistError.notAPlistValue(path: "value.gone", .null)
        #expect(throws: null) { try PlistJSON.decode(json) }
        #expect(null.description == "value.gone is null, which is not a property-list value (a key is removed with remove, not set to null)")
        let date = PlistError.notAPlistValue(path: "prefs.list[1]", .notADate("2024-02-30T00:00:00Z"))
        #expect(throws: date) { try PlistJSON.decode(PlistJSON.parse(#"{"list":[1,{"$date":"2024-02-30T00:00:00Z"}]}"#), path: "prefs") }
        #expect(
            date.description
                == #"prefs.list[1]: $date "2024-02-30T00:00:00Z" is not an ISO 8601 date and time within ±285,000 years of 2001 (e.g. 2024-05-01T12:00:00.000Z)"#
        )
        let data = PlistError.notAPlistValue(path: "value", .notBase64)
        #expect(throws: data) { try PlistJSON.decode(PlistJSON.parse(#"{"$data":"***"}"#)) }
        #expect(data.description == "value: $data is not base64")
    }

    @Test func encodedValuesReadBackExactly() throws {
        let value: PlistValue = [
            "integers": [.integer(.min), .integer(.max), -1_000_000_000_000_000_000, 0, -1],
            "reals": [0.1, 1e-5, .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude), 123_456.789, -2.5, 1e22, 3.0],
            "date": .date(Date(timeIntervalSince1970: 1_714_564_800.678)),
            "data": .data(Data([0, 1, 254, 255])),
            "text": "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} é 😀",
            "nested": ["a": [true, false, ["deeper": "yes"]]],
            "look-alike": ["$date": 5],
        ]
        let read = try PlistJSON.decode(PlistJSON.parse(PlistJSON.encode(value)))
        #expect(read == value)
        #expect(PlistJSON.encode(read) == PlistJSON.encode(value))
        #expect(PlistJSON.encode(.real(-0.0)) == "-0.0")
        #expect(PlistJSON.encode(.real(1000)) == "1000.0")
        #expect(
            PlistJSON.encode(JSONValue.object(["b": .real(1.5), "a": .array([.null, .integer(-3), .string("x")])])) == #"{"a":[null,-3,"x"],"b":1.5}"#
        )
    }
}

/// The JSON writer against the text as it was first made, by joining each
/// part's own string: the same bytes for every value (the cloud orders
/// equal-stamped writes by this text, so it must never change).
@Suite struct JSONTextWriterTests {
    /// The first encoder, kept as the reference.
    static func joined(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): return joinedQuote(s)
        case .integer(let i): return String(i)
        case .real(let d):
            if !d.isFinite { return "{\"$real\":\(joinedQuote(XMLPropertyList.formatReal(d)))}" }
            let text = "\(d)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return "{\"$date\":\(joinedQuote(PlistJSON.timestamp(d)))}"
        case .data(let d): return "{\"$data\":\(joinedQuote(d.base64EncodedString()))}"
        case .array(let a): return "[" + a.map { joined($0) }.joined(separator: ",") + "]"
        case .dictionary(let d):
            let body = "{" + d.keys.sorted().map { joinedQuote($0) + ":" + joined(d[$0]!) }.joined(separator: ",") + "}"
            if d.count == 1, let key = d.keys.first, ["$date", "$data", "$real", "$dict"].contains(key) { return "{\"$dict\":" + body + "}" }
            return body
        }
    }

    static func joinedQuote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func writesTheSameTextAsTheFirstEncoder() async {
        await propertyCheck(count: 1000, input: PlistGen.value(maximumDepth: 4)) { value in
            #expect(PlistJSON.encode(value) == Self.joined(value))
        }
    }

    @Test func escapesEveryControlCharacterAndKeepsTheRestAsUTF8() {
        for scalar in 0..<0x80 {
            let text = String(UnicodeScalar(UInt8(scalar)))
            #expect(PlistJSON.quote(text) == Self.joinedQuote(text), "U+\(String(scalar, radix: 16))")
        }
        #expect(PlistJSON.quote("\u{1}\u{1F}\u{7F}") == #""\u0001\u001f"# + "\u{7F}\"")
        #expect(PlistJSON.quote("a\"b\\c\nd") == #""a\"b\\c\nd""#)
        #expect(PlistJSON.quote("é 😀 \u{301}") == "\"é 😀 \u{301}\"")
        #expect(PlistJSON.encode(.integer(.min)) == "-9223372036854775808")
        #expect(PlistJSON.encode(.integer(.max)) == "9223372036854775807")
        #expect(PlistJSON.encode(.integer(0)) == "0")
    }

    /// The first `timestamp`, kept as the reference.
    static func joinedTimestamp(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSinceReferenceDate * 1000).rounded()
        let sinceEpoch = Int64(milliseconds) + PlistJSON.millisecondsFrom1970To2001
        let (days, inDay) = PlistJSON.floorDivision(sinceEpoch, 86_400_000)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let yearText: String
        if (0...9999).contains(year) {
            yearText = String(repeating: "0", count: 4 - String(year).count) + String(year)
        } else {
            let digits = String(abs(year))
            yearText = (year < 0 ? "-" : "+") + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
        }
        let millisecond = inDay % 1000
        let fraction = millisecond < 10 ? "00\(millisecond)" : millisecond < 100 ? "0\(millisecond)" : "\(millisecond)"
        return "\(yearText)-\(two(month))-\(two(day))T\(two(inDay / 3_600_000)):\(two(inDay / 60_000 % 60)):\(two(inDay / 1000 % 60)).\(fraction)Z"
    }

    @Test func writesTheSameTimestampsAsTheFirstEncoder() {
        var random = SystemRandomNumberGenerator()
        let limit = PlistJSON.maximumMilliseconds / 1000
        var seconds: [Double] = [
            0, -0.0005, 0.0005, -1, 1, limit, -limit, -63_114_076_800, -63_114_076_800.001, 252_423_993_600, 252_423_993_599.999,
        ]
        for _ in 0..<20_000 {
            let scale = [1e3, 1e6, 1e9, 1e11, 1e12, limit].randomElement(using: &random)!
            seconds.append(Double.random(in: -scale...scale, using: &random))
        }
        for value in seconds {
            let date = Date(timeIntervalSinceReferenceDate: value)
            #expect(PlistJSON.timestamp(date) == Self.joinedTimestamp(date), "\(value) s")
        }
    }

    /// The writer recurses (and ranks a small dictionary's keys on the
    /// stack), as the reader does: the deepest value a property list may hold
    /// must cross on a thread with half the usual 8 MiB stack. In a debug
    /// build the writer needs under 1 MiB for it (the first encoder 1–1.5),
    /// the reader 1–2 MiB.
    @Test func theDeepestValueCrossesOnASmallStack() throws {
        var value: PlistValue = "bottom"
        for level in 1..<PlistLimits.maximumDepth { value = level.isMultiple(of: 2) ? .array([value, 1]) : .dictionary(["k": value, "$date": 2]) }
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<PlistValue?>(nil)
        let thread = Thread { [value] in
            defer { done.signal() }
            let read = try? PlistJSON.decode(PlistJSON.parse(PlistJSON.encode(value)))
            result.withLock { $0 = read }
        }
        thread.stackSize = 4 << 20
        thread.start()
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(result.withLock { $0 } == value)
    }

    @Test func keysAreInStringOrderWhateverTheirBytes() {
        // Shared prefixes past 16 bytes, NUL, non-ASCII and a decomposed form: String's `<` decides.
        let keys = ["", "a", "a\u{0}", "ab", "abcdefghijklmnopq", "abcdefghijklmnop", "é", "f\u{301}", "Z", "zz", "\u{1F600}", "$dict"]
        let dictionary = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, PlistValue.integer(Int64($0))) })
        #expect(PlistJSON.encode(.dictionary(dictionary)) == Self.joined(.dictionary(dictionary)))
        #expect(PlistJSON.encode(.dictionary(["$dict": 1])) == #"{"$dict":{"$dict":1}}"#)
    }
}
