import Foundation

extension BinaryPropertyList {
    /// Writes each object once, straight into the output: a collection's
    /// children get the next object indices when it is written, scalars are
    /// written right after it, and nested collections wait in a work list
    /// (so a deep value cannot exhaust the stack) with their indices reserved.
    struct Writer {
        let refSize: Int
        let out: ByteOutput
        /// Each object's offset in `out`, by object index.
        var offsets: [Int]
        /// The next object index to hand out; 0 is the top object.
        var next = 1
        /// Collections whose indices are handed out and whose bytes are not written yet.
        var waiting: [(value: PlistValue, index: Int)] = []

        init(objectCount: Int) {
            refSize = Self.byteWidth(for: UInt64(objectCount))
            offsets = Array(repeating: 0, count: objectCount)
            out = ByteOutput(capacity: 64 + objectCount * 24)
        }

        mutating func write(_ root: PlistValue) -> [UInt8] {
            out.append(contentsOf: BinaryPropertyList.magic)
            place(root, at: 0)
            while let (value, index) = waiting.popLast() {
                offsets[index] = out.count
                writeCollection(value)
            }
            let offsetTableStart = out.count
            let offsetSize = Self.byteWidth(for: UInt64(offsetTableStart))
            for offset in offsets { appendUInt(UInt64(offset), width: offsetSize) }
            out.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)])
            appendUInt(UInt64(offsets.count), width: 8)
            appendUInt(0, width: 8)
            appendUInt(UInt64(offsetTableStart), width: 8)
            return out.bytes
        }

        /// A scalar is written now; a collection waits, its index reserved.
        private mutating func place(_ value: PlistValue, at index: Int) {
            if value.isCollection {
                waiting.append((value, index))
            } else {
                offsets[index] = out.count
                appendScalar(value)
            }
        }

        private mutating func writeCollection(_ value: PlistValue) {
            switch value {
            case .array(let elements):
                let first = next
                next += elements.count
                appendMarker(0xA0, count: elements.count)
                for position in elements.indices { appendUInt(UInt64(first + position), width: refSize) }
                for (position, element) in elements.enumerated() { place(element, at: first + position) }
            case .dictionary(let dictionary):
                // Sorted, so the same contents always give the same bytes.
                let order = KeyOrder.sorted(dictionary)
                let first = next
                next += 2 * order.count
                appendMarker(0xD0, count: order.count)
                for position in 0..<2 * order.count { appendUInt(UInt64(first + position), width: refSize) }
                for (position, index) in order.enumerated() {
                    offsets[first + position] = out.count
                    appendString(dictionary[index].key)
                }
                for (position, index) in order.enumerated() { place(dictionary[index].value, at: first + order.count + position) }
            default:
                preconditionFailure("only collections wait to be written")
            }
        }

        static func byteWidth(for maximum: UInt64) -> Int {
            if maximum <= 0xFF { return 1 }
            if maximum <= 0xFFFF { return 2 }
            if maximum <= 0xFFFF_FFFF { return 4 }
            return 8
        }

        @inline(__always)
        private mutating func appendUInt(_ value: UInt64, width: Int) {
            switch width {
            case 1: out.append(UInt8(truncatingIfNeeded: value))
            case 2:
                out.append(UInt8(truncatingIfNeeded: value >> 8))
                out.append(UInt8(truncatingIfNeeded: value))
            case 4: withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian) { out.append(contentsOf: $0) }
            default: withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
            }
        }

        private mutating func appendInteger(_ value: Int64) {
            // 1, 2 and 4-byte integers are unsigned; negatives take the 8-byte form.
            if value >= 0 && value <= 0xFF {
                out.append(0x10)
                appendUInt(UInt64(value), width: 1)
            } else if value >= 0 && value <= 0xFFFF {
                out.append(0x11)
                appendUInt(UInt64(value), width: 2)
            } else if value >= 0 && value <= 0xFFFF_FFFF {
                out.append(0x12)
                appendUInt(UInt64(value), width: 4)
            } else {
                out.append(0x13)
                appendUInt(UInt64(bitPattern: value), width: 8)
            }
        }

        private mutating func appendMarker(_ marker: UInt8, count: Int) {
            if count < 15 {
                out.append(marker | UInt8(count))
            } else {
                out.append(marker | 0x0F)
                appendInteger(Int64(count))
            }
        }

        /// ASCII as 0x5_ bytes, anything else as big-endian UTF-16 (0x6_), as Apple's writers do.
        private mutating func appendString(_ string: String) {
            let ascii = string.utf8.withContiguousStorageIfAvailable { bytes in
                guard BinaryPropertyList.isASCII(bytes) else { return false }
                appendMarker(0x50, count: bytes.count)
                out.append(contentsOf: bytes)
                return true
            }
            if ascii == true { return }
            if ascii == nil, string.utf8.allSatisfy({ $0 < 0x80 }) {
                appendMarker(0x50, count: string.utf8.count)
                out.append(contentsOf: string.utf8)
                return
            }
            let units = Array(string.utf16)
            appendMarker(0x60, count: units.count)
            for unit in units {
                out.append(UInt8(unit >> 8))
                out.append(UInt8(unit & 0xFF))
            }
        }

        private mutating func appendScalar(_ value: PlistValue) {
            switch value {
            case .bool(let b): out.append(b ? 0x09 : 0x08)
            case .integer(let i): appendInteger(i)
            case .real(let d):
                out.append(0x23)
                appendUInt(d.bitPattern, width: 8)
            case .date(let date):
                out.append(0x33)
                appendUInt(date.timeIntervalSinceReferenceDate.bitPattern, width: 8)
            case .data(let data):
                appendMarker(0x40, count: data.count)
                out.append(contentsOf: data)
            case .string(let string): appendString(string)
            case .array, .dictionary:
                preconditionFailure("collections are written by writeCollection")
            }
        }
    }
}
