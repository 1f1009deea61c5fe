import AppProtocol
import Foundation
import TestSupport
import Testing

/// Values cross the control protocol exactly, or are refused with an error
/// that names the field and changes nothing (docs/protocol.md, "Values").
/// Checked on the raw lines a real main-app reads and writes.
@Suite struct ProtocolValueTests {
    let root = TemporaryRoot()

    func get(_ app: AppProcess, _ key: String, id: Int) throws -> String {
        try app.rawResponse(to: #"{"id":\#(id),"cmd":"get","key":"\#(key)"}"#)
    }

    @Test func integersOutsideInt64AreRefusedNamingTheFieldAndChangeNothing() throws {
        let app = try AppProcess("main-app", root: root)
        #expect(try app.rawResponse(to: #"{"id":1,"cmd":"set","key":"n","value":5}"#) == #"{"id":1,"ok":true}"#)

        let set = try app.rawResponse(to: #"{"id":2,"cmd":"set","key":"n","value":18446744073709551615}"#)
        #expect(set.hasPrefix(#"{"id":2,"ok":false,"error":"value: 18446744073709551615 is outside the 64-bit integer range"#), "\(set)")
        let nested = try app.rawResponse(to: #"{"id":3,"cmd":"set","key":"n","value":{"list":[1,-9223372036854775809]}}"#)
        #expect(nested.hasPrefix(#"{"id":3,"ok":false,"error":"value.list[1]: -9223372036854775809 is outside"#), "\(nested)")
        let increment = try app.rawResponse(to: #"{"id":4,"cmd":"increment","key":"n","by":18446744073709551615}"#)
        #expect(increment.hasPrefix(#"{"id":4,"ok":false,"error":"by: 18446744073709551615 is outside the 64-bit integer range"#), "\(increment)")

        #expect(try get(app, "n", id: 5) == #"{"id":5,"ok":true,"key":"n","value":5,"domain":"group.com.example.notes"}"#)
    }

    @Test func integersUpToTheEdgesOfInt64CrossExactly() throws {
        let app = try AppProcess("main-app", root: root)
        for (index, number) in ["-1000000000000000000", "-9223372036854775808", "9223372036854775807", "-1", "0"].enumerated() {
            let id = 10 * (index + 1)
            #expect(try app.rawResponse(to: #"{"id":\#(id),"cmd":"set","key":"n","value":\#(number)}"#) == #"{"id":\#(id),"ok":true}"#)
            #expect(try get(app, "n", id: id + 1) == #"{"id":\#(id + 1),"ok":true,"key":"n","value":\#(number),"domain":"group.com.example.notes"}"#)
        }
        // An increment that stays in range is exact too.
        _ = try app.rawResponse(to: #"{"id":90,"cmd":"set","key":"big","value":-1000000000000000000}"#)
        #expect(
            try app.rawResponse(to: #"{"id":91,"cmd":"increment","key":"big","by":-8000000000000000000}"#)
                == #"{"id":91,"ok":true,"value":-9000000000000000000}"#)
        // -0 is the integer 0; a real keeps its point.
        _ = try app.rawResponse(to: #"{"id":92,"cmd":"set","key":"z","value":[-0,-0.0,1e3,5e-324]}"#)
        #expect(try get(app, "z", id: 93) == #"{"id":93,"ok":true,"key":"z","value":[0,-0.0,1000.0,5e-324],"domain":"group.com.example.notes"}"#)
    }

    @Test func datesKeepTheMillisecondsThatWereWritten() throws {
        let app = try AppProcess("main-app", root: root)
        let dates = [
            "2024-05-01T12:00:00.678Z", "2024-05-01T12:00:00.001Z", "2024-05-01T12:00:00.999Z", "2026-11-22T03:40:44.945Z",
            "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "2001-01-01T00:00:00.001Z", "1600-02-29T23:59:59.123Z",
        ]
        for (index, date) in dates.enumerated() {
            let id = 2 * index + 1
            #expect(try app.rawResponse(to: #"{"id":\#(id),"cmd":"set","key":"d","value":{"$date":"\#(date)"}}"#) == #"{"id":\#(id),"ok":true}"#)
            #expect(
                try get(app, "d", id: id + 1)
                    == #"{"id":\#(id + 1),"ok":true,"key":"d","value":{"$date":"\#(date)"},"domain":"group.com.example.notes"}"#)
        }
        // An offset is converted to UTC; more digits are rounded to the nearest millisecond.
        _ = try app.rawResponse(to: #"{"id":50,"cmd":"set","key":"d","value":{"$date":"2024-05-01T14:00:00.6786+02:00"}}"#)
        #expect(
            try get(app, "d", id: 51)
                == #"{"id":51,"ok":true,"key":"d","value":{"$date":"2024-05-01T12:00:00.679Z"},"domain":"group.com.example.notes"}"#)
        let bad = try app.rawResponse(to: #"{"id":52,"cmd":"set","key":"d","value":{"$date":"2024-02-30T00:00:00Z"}}"#)
        #expect(bad.hasPrefix(#"{"id":52,"ok":false,"error":"value: $date \"2024-02-30T00:00:00Z\""#), "\(bad)")
    }

    @Test func realsOutsideDoubleAreRefusedWithTheRequestID() throws {
        let app = try AppProcess("main-app", root: root)
        let large = try app.rawResponse(to: #"{"id":1,"cmd":"set","key":"x","value":1e400}"#)
        #expect(large.hasPrefix(#"{"id":1,"ok":false,"error":"value: 1e400 is too large for a real"#), "\(large)")
        let small = try app.rawResponse(to: #"{"id":2,"cmd":"set","key":"x","value":-1e-400}"#)
        #expect(small.hasPrefix(#"{"id":2,"ok":false,"error":"value: -1e-400 is too small for a real"#), "\(small)")
        #expect(try get(app, "x", id: 3) == #"{"id":3,"ok":true,"key":"x","value":null,"domain":null}"#)
    }

    @Test func jsonThatIsNotExactlyOneObjectIsRefused() throws {
        let app = try AppProcess("main-app", root: root)
        // (line, the start of the response)
        let cases: [(String, String)] = [
            (#"{"id":1,"cmd":"set","key":"k","value":{"a":1,"a":2}}"#, #"{"id":1,"ok":false,"error":"value: duplicate key \"a\""#),
            (#"{"id":2,"cmd":"set","key":"k","cmd":"get"}"#, #"{"id":2,"ok":false,"error":"duplicate key \"cmd\""#),
            (#"{"id":3,"cmd":"ping"} and more"#, #"{"id":3,"ok":false,"error":"unexpected text after the JSON value (at byte 22)"#),
            (#"{"id":4,"cmd":"set","key":"k","value":"\ud800"}"#, #"{"id":4,"ok":false,"error":"value: \\ud800 is half of a UTF-16 surrogate pair"#),
            (#"{"id":5,"cmd":"set","key":"k","value":01}"#, #"{"id":null,"ok":false,"error":"invalid JSON at byte 38: a number cannot start with 0"#),
            (#"{"id":6,"cmd":"set","key":"k","value":NaN}"#, #"{"id":null,"ok":false,"error":"invalid JSON at byte 38: expected a value"#),
            ("[1, 2]", #"{"id":null,"ok":false,"error":"not a JSON object: [1, 2]"#),
        ]
        for (line, expected) in cases {
            let response = try app.rawResponse(to: line)
            #expect(response.hasPrefix(expected), "\(line) → \(response)")
        }
        #expect(try get(app, "k", id: 7) == #"{"id":7,"ok":true,"key":"k","value":null,"domain":null}"#)
    }

    @Test func valuesNestingDeeperThanTheLimitAreRefusedAsSuch() throws {
        let app = try AppProcess("main-app", root: root)
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(try app.rawResponse(to: #"{"id":1,"cmd":"set","key":"deep","value":\#(nested(512))}"#) == #"{"id":1,"ok":true}"#)
        let refused = try app.rawResponse(to: #"{"id":2,"cmd":"set","key":"deep","value":\#(nested(513))}"#)
        #expect(refused.contains(#""ok":false,"error":"value nests arrays and objects more than 512 deep"#), "\(refused.prefix(300))")
        // A single appended value becomes an item: one level less is left for it.
        let object = String(repeating: #"{"a":"#, count: 512) + "1" + String(repeating: "}", count: 512)
        let append = try app.rawResponse(to: #"{"id":4,"cmd":"append","key":"list","value":\#(object)}"#)
        #expect(append.hasPrefix(#"{"id":4,"ok":false,"error":"append: value nests arrays and objects more than 511 deep"#), "\(append.prefix(300))")
        let huge = try app.rawResponse(to: #"{"id":3,"cmd":"set","key":"deep","value":\#(nested(100_000))}"#)
        #expect(huge.contains("more than 512 deep"), "\(huge.prefix(300))")
        #expect(try app.request(.ping).ok)
    }
}
