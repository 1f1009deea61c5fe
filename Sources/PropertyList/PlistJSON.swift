import Foundation

/// Property-list values as JSON, for the line protocols and `--json` output.
/// Strings, numbers, booleans, arrays and objects map to themselves (an
/// integer has no decimal point, a real always has one); a date is
/// `{"$date": "<ISO 8601>"}` and data is `{"$data": "<base64>"}`.
package enum PlistJSON {

    package static func encode(_ value: PlistValue?) -> String {
        guard let value else { return "null" }
        var writer = JSONTextWriter()
        writer.write(value)
        return writer.text
    }

    /// The one-key objects that stand for a value JSON has no form for.
    static let specialForms: Set<String> = ["$date", "$data", "$real", "$dict"]

    /// A JSON string literal of `s`.
    package static func quote(_ s: String) -> String {
        var writer = JSONTextWriter(capacity: s.utf8.count + 2)
        writer.writeString(s)
        return writer.text
    }

    /// Converts JSON read by `parse` into a plist value. Only an object with
    /// the single key `$date` or `$data` and a string value is a date or data;
    /// null is not a value (with `droppingNulls`, a null inside an object
    /// means "absent" and is left out). `path` names the value in errors.
    package static func decode(_ json: JSONValue, path: String = "value", droppingNulls: Bool = false) throws(PlistError) -> PlistValue {
        do {
            return try decodeValue(json, droppingNulls: droppingNulls)
        } catch {
            throw error.under(path)
        }
    }

    private static func decodeValue(_ json: JSONValue, droppingNulls: Bool) throws(PlistError) -> PlistValue {
        switch json {
        case .string(let s): return .string(s)
        case .integer(let i): return .integer(i)
        case .real(let d): return .real(d)
        case .bool(let b): return .bool(b)
        case .null: throw .notAPlistValue(path: "", .null)
        case .array(let elements):
            var out: [PlistValue] = []
            out.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                do { out.append(try decodeValue(element, droppingNulls: droppingNulls)) } catch { throw error.under("[\(index)]") }
            }
            return .array(out)
        case .object(let members):
            if members.count == 1, case .string(let text)? = members["$date"] {
                guard let date = date(iso8601: text) else {
                    throw .notAPlistValue(path: "", .notADate(text))
                }
                return .date(date)
            }
            if members.count == 1, case .string(let text)? = members["$data"] {
                guard let data = Data(base64Encoded: text) else { throw .notAPlistValue(path: "", .notBase64) }
                return .data(data)
            }
            if members.count == 1, case .string(let text)? = members["$real"] {
                switch text {
                case "nan": return .real(.nan)
                case "+infinity": return .real(.infinity)
                case "-infinity": return .real(-.infinity)
                default:
                    throw .notAPlistValue(path: "", .notASpecialReal(String(text.prefix(40))))
                }
            }
            if members.count == 1, case .object(let literal)? = members["$dict"] {
                return try decodeMembers(literal, droppingNulls: droppingNulls)
            }
            return try decodeMembers(members, droppingNulls: droppingNulls)
        }
    }

    private static func decodeMembers(_ members: [String: JSONValue], droppingNulls: Bool) throws(PlistError) -> PlistValue {
        // Usually every member converts: `mapValues` keeps the object's hash
        // table, where inserting each key into a new one hashed them all again.
        // A failure is found again below, which names its key.
        if !droppingNulls || !members.values.contains(.null),
            let converted = try? members.mapValues({ member throws(PlistError) in try decodeValue(member, droppingNulls: droppingNulls) })
        {
            return .dictionary(converted)
        }
        var out: [String: PlistValue] = [:]
        for (key, member) in members {
            if droppingNulls && member == .null { continue }
            do { out[key] = try decodeValue(member, droppingNulls: droppingNulls) } catch { throw error.under(".\(key)") }
        }
        return .dictionary(out)
    }

    /// JSON text for a value read by `parse` (an id echoed in a response).
    package static func encode(_ json: JSONValue) -> String {
        var writer = JSONTextWriter()
        writer.write(json)
        return writer.text
    }
}

// MARK: Dates

extension PlistJSON {
    /// ISO 8601 in UTC, rounded to the nearest millisecond: 2026-11-22T03:40:44.945Z.
    /// Reading it back with `date(iso8601:)` gives the same text, so the
    /// milliseconds that were written cross every protocol unchanged. Years
    /// outside 0000–9999 have a sign and six digits (+010000-01-01T…); a
    /// date too far out to count in milliseconds (or not a number) gets a
    /// text that no reader accepts as a date.
    package static func timestamp(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSinceReferenceDate * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) <= maximumMilliseconds else {
            return "unrepresentable date (\(date.timeIntervalSinceReferenceDate) s from 2001-01-01T00:00:00Z)"
        }
        let sinceEpoch = Int64(milliseconds) + millisecondsFrom1970To2001
        let (days, inDay) = floorDivision(sinceEpoch, 86_400_000)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        // Fixed-width digits into one buffer (every event line carries a timestamp).
        var text: [UInt8] = []
        text.reserveCapacity(27)
        func digits(_ value: Int64, width: Int) {
            let first = text.count
            var rest = value
            repeat {
                text.append(UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
            } while rest > 0 || text.count - first < width
            text[first...].reverse()
        }
        if (0...9999).contains(year) {
            digits(year, width: 4)
        } else {
            text.append(UInt8(ascii: year < 0 ? "-" : "+"))
            digits(abs(year), width: 6)
        }
        text.append(UInt8(ascii: "-"))
        digits(month, width: 2)
        text.append(UInt8(ascii: "-"))
        digits(day, width: 2)
        text.append(UInt8(ascii: "T"))
        digits(inDay / 3_600_000, width: 2)
        text.append(UInt8(ascii: ":"))
        digits(inDay / 60_000 % 60, width: 2)
        text.append(UInt8(ascii: ":"))
        digits(inDay / 1000 % 60, width: 2)
        text.append(UInt8(ascii: "."))
        digits(inDay % 1000, width: 3)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// Reads an ISO 8601 date: `2024-05-01`, `2024-05-01T12:00:00`, with
    /// `.f` to `.fffffffff` seconds, and `Z`, `±hh:mm`, `±hhmm` or no zone
    /// (UTC). The value is the double nearest to the exact time written, so
    /// `timestamp` gives back the milliseconds that were written. Nil for
    /// anything else, including dates that do not exist (2024-02-30), and
    /// dates too far out for `timestamp` to write back (about ±285,000
    /// years: what is read is always what can be written).
    package static func date(iso8601 text: String) -> Date? {
        var scanner = DateScanner(bytes: Array(text.utf8))
        guard let date = scanner.date() else { return nil }
        let milliseconds = (date.timeIntervalSinceReferenceDate * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) <= maximumMilliseconds else { return nil }
        return date
    }

    /// The farthest a date may be from 2001 in milliseconds: 2^53, where doubles stop counting every millisecond.
    static let maximumMilliseconds = 9_007_199_254_740_992.0

    static let millisecondsFrom1970To2001: Int64 = 978_307_200_000

    static func floorDivision(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = a % b
        return remainder < 0 ? (a / b - 1, remainder + b) : (a / b, remainder)
    }
}

/// The strict ISO 8601 reader behind `PlistJSON.date(iso8601:)`.
private struct DateScanner {
    let bytes: [UInt8]
    var index = 0

    mutating func digits(_ count: Int) -> Int64? {
        guard bytes.count - index >= count else { return nil }
        var value: Int64 = 0
        for byte in bytes[index..<(index + count)] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        index += count
        return value
    }

    mutating func take(_ characters: String) -> UInt8? {
        guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return nil }
        index += 1
        return bytes[index - 1]
    }

    mutating func date() -> Date? {
        // Year: four digits, or a sign and six (ISO 8601's expanded form).
        let year: Int64
        if let sign = take("+-") {
            guard let magnitude = digits(6) else { return nil }
            year = sign == UInt8(ascii: "-") ? -magnitude : magnitude
        } else {
            guard let plain = digits(4) else { return nil }
            year = plain
        }
        guard take("-") != nil, let month = digits(2), take("-") != nil, let day = digits(2),
            (1...12).contains(month), (1...CivilCalendar.daysInMonth(month, year: year)).contains(day)
        else { return nil }
        var seconds = CivilCalendar.days(year: year, month: month, day: day) * 86_400
        var fraction: Int64 = 0
        var fractionDigits = 0
        if index < bytes.count {
            guard take("Tt") != nil, let hour = digits(2), take(":") != nil, let minute = digits(2), take(":") != nil,
                let second = digits(2), hour < 24, minute < 60, second < 60
            else { return nil }
            seconds += hour * 3600 + minute * 60 + second
            if take(".,") != nil {
                while index < bytes.count, let digit = digits(1) {
                    guard fractionDigits < 9 else { return nil }
                    fraction = fraction * 10 + digit
                    fractionDigits += 1
                }
                guard fractionDigits > 0 else { return nil }
            }
            if let zone = take("Zz+-") {
                if zone == UInt8(ascii: "+") || zone == UInt8(ascii: "-") {
                    guard let hours = digits(2) else { return nil }
                    _ = take(":")
                    guard let minutes = digits(2), hours < 24, minutes < 60 else { return nil }
                    let offset = hours * 3600 + minutes * 60
                    seconds -= zone == UInt8(ascii: "+") ? offset : -offset
                }
            }
        }
        guard index == bytes.count else { return nil }
        // Whole seconds and the fraction in one integer, divided once: the nearest double to the exact time.
        let scale = (0..<fractionDigits).reduce(Int64(1)) { result, _ in result * 10 }
        let sinceReference = seconds - PlistJSON.millisecondsFrom1970To2001 / 1000
        let (scaled, overflowed) = sinceReference.multipliedReportingOverflow(by: scale)
        let (total, overflowedAgain) = scaled.addingReportingOverflow(fraction)
        if overflowed || overflowedAgain {
            return Date(timeIntervalSinceReferenceDate: Double(sinceReference) + Double(fraction) / Double(scale))
        }
        return Date(timeIntervalSinceReferenceDate: Double(total) / Double(scale))
    }
}
