import Foundation

/// The text of an XML document as UTF-8 bytes, whatever it was stored in.
enum XMLText {
    /// UTF-8 as it is (a byte-order mark dropped); UTF-16 told by its
    /// byte-order mark or by the zero bytes around "<", transcoded strictly.
    /// `partial` reads a head cut anywhere (for format detection).
    static func utf8Bytes(of data: Data, partial: Bool) throws(PropertyListError) -> [UInt8] {
        let bytes = [UInt8](data)
        let bigEndian: Bool
        var start = 0
        switch (bytes.count > 0 ? bytes[0] : nil, bytes.count > 1 ? bytes[1] : nil) {
        case (0xFE, 0xFF):
            bigEndian = true
            start = 2
        case (0xFF, 0xFE):
            bigEndian = false
            start = 2
        case (0x00, 0x3C): bigEndian = true
        case (0x3C, 0x00): bigEndian = false
        default:
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes[3...]) }
            return bytes
        }
        var end = bytes.count
        if (end - start) % 2 != 0 {
            guard partial else { throw .invalidXML(line: 1, column: 1, reason: "UTF-16 text with an odd number of bytes") }
            end -= 1
        }
        var units = [UInt16]()
        units.reserveCapacity((end - start) / 2)
        for i in stride(from: start, to: end, by: 2) {
            units.append(bigEndian ? UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1]) : UInt16(bytes[i + 1]) << 8 | UInt16(bytes[i]))
        }
        if partial, let last = units.last, UTF16.isLeadSurrogate(last) { units.removeLast() }
        guard let text = String(validating: units, as: UTF16.self) else {
            throw .invalidXML(line: 1, column: 1, reason: "invalid UTF-16 text (an unpaired surrogate)")
        }
        return Array(text.utf8)
    }
}
