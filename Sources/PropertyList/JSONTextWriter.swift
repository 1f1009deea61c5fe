import Foundation

/// JSON text written into one buffer of UTF-8 bytes, for `PlistJSON`'s
/// encoders: each value goes straight into it. Joining each part's own
/// string (the way the text was first made) cost about 50 instructions per
/// byte of output, and every event line and sync message is made here.
/// Used where it is made: a copy of a writer shares its buffer.
struct JSONTextWriter {
    private let bytes: ByteOutput

    init(capacity: Int = 128) { bytes = ByteOutput(capacity: capacity) }

    /// The text written so far (valid UTF-8: it is made of `String`s' bytes and ASCII).
    var text: String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    mutating func write(_ value: PlistValue) {
        switch value {
        case .string(let string): writeString(string)
        case .integer(let integer): writeInteger(integer)
        case .real(let real): writeReal(real)
        case .bool(let flag): writeLiteral(flag ? "true" : "false")
        case .date(let date): writeSpecialForm("$date", PlistJSON.timestamp(date))
        case .data(let data): writeSpecialForm("$data", data.base64EncodedString())
        case .array(let elements): writeArray(elements) { $0.write($1) }
        case .dictionary(let dictionary):
            // One that would read back as one of the special forms is wrapped, so it stays a dictionary.
            let wrapped = dictionary.count == 1 && PlistJSON.specialForms.contains(dictionary.first!.key)
            if wrapped { writeLiteral("{\"$dict\":") }
            bytes.append(UInt8(ascii: "{"))
            KeyOrder.withSortedRanks(dictionary) { ranks in
                for (position, rank) in ranks.enumerated() {
                    if position > 0 { bytes.append(UInt8(ascii: ",")) }
                    let (key, member) = dictionary[rank.index]
                    writeString(key)
                    bytes.append(UInt8(ascii: ":"))
                    write(member)
                }
            }
            bytes.append(UInt8(ascii: "}"))
            if wrapped { bytes.append(UInt8(ascii: "}")) }
        }
    }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeLiteral("null")
        case .bool(let flag): writeLiteral(flag ? "true" : "false")
        case .integer(let integer): writeInteger(integer)
        case .real(let real): writeReal(real)
        case .string(let string): writeString(string)
        case .array(let elements): writeArray(elements) { $0.write($1) }
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                write(members[key]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func writeArray<Element>(_ elements: [Element], _ writeElement: (inout JSONTextWriter, Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            writeElement(&self, element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A string literal: `"` and `\` escaped, `\n`, `\r`, `\t` by name, the
    /// other control characters as `\u00xx`; everything else as its UTF-8.
    mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var plainFrom = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom..<index]))
                writeEscape(byte)
                plainFrom = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainFrom...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
        default:
            // Lower-case hex digits, as `String(format: "%04x")` writes them.
            func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10 }
            writeLiteral("u00")
            bytes.append(hexDigit(byte >> 4))
            bytes.append(hexDigit(byte & 0xF))
        }
    }

    /// Decimal digits, with a minus sign when negative (Int64.min included).
    mutating func writeInteger(_ integer: Int64) {
        if integer < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = integer.magnitude
        // Right to left into a buffer of the longest (20 digits), then appended at once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    /// Always with a point or an exponent, so it reads back as a real; a
    /// value JSON has no number for (infinity, NaN) as `{"$real": "…"}`.
    private mutating func writeReal(_ real: Double) {
        guard real.isFinite else { return writeSpecialForm("$real", XMLPropertyList.formatReal(real)) }
        let text = "\(real)"
        bytes.append(contentsOf: text.utf8)
        if !text.utf8.contains(UInt8(ascii: ".")) && !text.utf8.contains(UInt8(ascii: "e")) { writeLiteral(".0") }
    }

    /// `{"<form>":"<text>"}`.
    private mutating func writeSpecialForm(_ form: StaticString, _ text: String) {
        bytes.append(UInt8(ascii: "{"))
        bytes.append(UInt8(ascii: "\""))
        writeLiteral(form)
        writeLiteral("\":")
        writeString(text)
        bytes.append(UInt8(ascii: "}"))
    }

    private mutating func writeLiteral(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
}
