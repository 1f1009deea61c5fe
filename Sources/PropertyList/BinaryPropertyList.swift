import Foundation

/// Apple's binary property-list format ("bplist00"), written and read here
/// rather than through `PropertyListSerialization`: it is on every commit's
/// path, and it keeps `bool` and `integer` apart exactly.
public enum BinaryPropertyList {
    static let magic: [UInt8] = Array("bplist00".utf8)

    public static func isBinary(_ data: Data) -> Bool {
        data.count >= 8 && data.prefix(8).elementsEqual(magic)
    }

    // MARK: Encoding

    public static func encode(_ root: PlistValue) -> Data {
        var writer = Writer()
        let top = writer.flatten(root)
        return writer.serialize(top: top)
    }

    private enum Object {
        case scalar(PlistValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private struct Writer {
        /// Objects in file order. Values are not uniqued (Apple's writer does
        /// it; readers do not need it, and hashing every value was a third of
        /// the encoding time).
        var objects: [Object] = []

        mutating func flatten(_ value: PlistValue) -> Int {
            switch value {
            case .array(let elements):
                let index = reserve()
                objects[index] = .array(elements.map { flatten($0) })
                return index
            case .dictionary(let dictionary):
                let index = reserve()
                // Sorted, so the same contents always give the same bytes.
                let entries = dictionary.sorted { $0.key < $1.key }
                let keyRefs = entries.map { flatten(.string($0.key)) }
                let valueRefs = entries.map { flatten($0.value) }
                objects[index] = .dictionary(keys: keyRefs, values: valueRefs)
                return index
            default:
                objects.append(.scalar(value))
                return objects.count - 1
            }
        }

        mutating func reserve() -> Int {
            objects.append(.array([]))
            return objects.count - 1
        }

        func serialize(top: Int) -> Data {
            let refSize = Self.byteWidth(for: UInt64(objects.count))
            var out = [UInt8]()
            out.reserveCapacity(64 + objects.count * 16)
            out.append(contentsOf: BinaryPropertyList.magic)
            var offsets = [UInt64]()
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(UInt64(out.count))
                switch object {
                case .scalar(let value): Self.appendScalar(value, to: &out)
                case .array(let refs):
                    Self.appendMarker(0xA0, count: refs.count, to: &out)
                    for ref in refs { Self.appendUInt(UInt64(ref), width: refSize, to: &out) }
                case .dictionary(let keys, let values):
                    Self.appendMarker(0xD0, count: keys.count, to: &out)
                    for ref in keys { Self.appendUInt(UInt64(ref), width: refSize, to: &out) }
                    for ref in values { Self.appendUInt(UInt64(ref), width: refSize, to: &out) }
                }
            }
            let offsetTableStart = UInt64(out.count)
            let offsetSize = Self.byteWidth(for: offsetTableStart)
            for offset in offsets { Self.appendUInt(offset, width: offsetSize, to: &out) }
            out.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(refSize)])
            Self.appendUInt(UInt64(objects.count), width: 8, to: &out)
            Self.appendUInt(UInt64(top), width: 8, to: &out)
            Self.appendUInt(offsetTableStart, width: 8, to: &out)
            return Data(out)
        }

        static func byteWidth(for maximum: UInt64) -> Int {
            if maximum <= 0xFF { return 1 }
            if maximum <= 0xFFFF { return 2 }
            if maximum <= 0xFFFF_FFFF { return 4 }
            return 8
        }

        static func appendUInt(_ value: UInt64, width: Int, to out: inout [UInt8]) {
            for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }

        static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
            // 1, 2 and 4-byte integers are unsigned; negatives take the 8-byte form.
            if value >= 0 && value <= 0xFF { out.append(0x10); appendUInt(UInt64(value), width: 1, to: &out) }
            else if value >= 0 && value <= 0xFFFF { out.append(0x11); appendUInt(UInt64(value), width: 2, to: &out) }
            else if value >= 0 && value <= 0xFFFF_FFFF { out.append(0x12); appendUInt(UInt64(value), width: 4, to: &out) }
            else { out.append(0x13); appendUInt(UInt64(bitPattern: value), width: 8, to: &out) }
        }

        static func appendMarker(_ marker: UInt8, count: Int, to out: inout [UInt8]) {
            if count < 15 {
                out.append(marker | UInt8(count))
            } else {
                out.append(marker | 0x0F)
                appendInteger(Int64(count), to: &out)
            }
        }

        static func appendScalar(_ value: PlistValue, to out: inout [UInt8]) {
            switch value {
            case .bool(let b): out.append(b ? 0x09 : 0x08)
            case .integer(let i): appendInteger(i, to: &out)
            case .real(let d): out.append(0x23); appendUInt(d.bitPattern, width: 8, to: &out)
            case .date(let date):
                out.append(0x33); appendUInt(date.timeIntervalSinceReferenceDate.bitPattern, width: 8, to: &out)
            case .data(let data): appendMarker(0x40, count: data.count, to: &out); out.append(contentsOf: data)
            case .string(let string):
                let ascii = string.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 < 0x80 } }
                    ?? string.utf8.allSatisfy { $0 < 0x80 }
                if ascii {
                    appendMarker(0x50, count: string.utf8.count, to: &out)
                    out.append(contentsOf: string.utf8)
                } else {
                    let units = Array(string.utf16)
                    appendMarker(0x60, count: units.count, to: &out)
                    for unit in units { out.append(UInt8(unit >> 8)); out.append(UInt8(unit & 0xFF)) }
                }
            case .array, .dictionary:
                preconditionFailure("collections are flattened before serialization")
            }
        }
    }

    // MARK: Decoding

    public static func decode(_ data: Data) throws -> PlistValue {
        let bytes = [UInt8](data)
        var reader = try Reader(bytes: bytes)
        return try reader.object(at: reader.topObject, depth: 0)
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let refSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        var visiting = Set<Int>()

        init(bytes: [UInt8]) throws {
            self.bytes = bytes
            guard bytes.count >= 8 + 32, bytes.prefix(8).elementsEqual(BinaryPropertyList.magic) else {
                throw PropertyListError.corruptBinary(offset: 0, reason: "too short or missing the 'bplist00' header")
            }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            refSize = Int(bytes[trailer + 7])
            let count = Self.readUInt(bytes, at: trailer + 8, width: 8)
            let top = Self.readUInt(bytes, at: trailer + 16, width: 8)
            let table = Self.readUInt(bytes, at: trailer + 24, width: 8)
            guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(refSize) else {
                throw PropertyListError.corruptBinary(offset: trailer, reason: "invalid offset or reference size in the trailer")
            }
            guard count > 0, count < UInt64(bytes.count), top < count, table >= 8,
                  table < UInt64(trailer), (UInt64(trailer) - table) / UInt64(offsetSize) >= count
            else {
                throw PropertyListError.corruptBinary(offset: trailer, reason: "trailer points outside the file")
            }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
        }

        static func readUInt(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<width { value = (value << 8) | UInt64(bytes[offset + i]) }
            return value
        }

        func need(_ offset: Int, _ length: Int) throws {
            guard length >= 0, offset >= 0, offset <= bytes.count - 32, length <= bytes.count - 32 - offset else {
                throw PropertyListError.corruptBinary(offset: offset, reason: "object runs past the end of the data")
            }
        }

        func offset(of index: Int) throws -> Int {
            guard index < objectCount else {
                throw PropertyListError.corruptBinary(offset: offsetTable, reason: "reference \(index) out of range")
            }
            let value = Self.readUInt(bytes, at: offsetTable + index * offsetSize, width: offsetSize)
            guard value >= 8, value < UInt64(offsetTable) else {
                throw PropertyListError.corruptBinary(offset: offsetTable, reason: "object \(index) has an invalid offset")
            }
            return Int(value)
        }

        /// Reads the length of a variable-size object: the low nibble, or a following integer.
        func count(at offset: Int) throws -> (count: Int, start: Int) {
            let nibble = Int(bytes[offset] & 0x0F)
            if nibble != 0x0F { return (nibble, offset + 1) }
            try need(offset + 1, 1)
            let marker = bytes[offset + 1]
            guard marker & 0xF0 == 0x10, marker & 0x0F <= 3 else {
                throw PropertyListError.corruptBinary(offset: offset + 1, reason: "invalid length marker")
            }
            let width = 1 << Int(marker & 0x0F)
            try need(offset + 2, width)
            let value = Self.readUInt(bytes, at: offset + 2, width: width)
            guard value < UInt64(bytes.count) else {
                throw PropertyListError.corruptBinary(offset: offset + 1, reason: "length \(value) exceeds the data")
            }
            return (Int(value), offset + 2 + width)
        }

        mutating func object(at index: Int, depth: Int) throws -> PlistValue {
            let start = try offset(of: index)
            try need(start, 1)
            let marker = bytes[start]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw PropertyListError.corruptBinary(offset: start, reason: "null or fill objects are not supported")
                }
            case 0x1:
                let width = 1 << Int(marker & 0x0F)
                guard width <= 16 else { throw PropertyListError.corruptBinary(offset: start, reason: "invalid integer width") }
                try need(start + 1, width)
                if width == 16 {
                    // 128-bit integers hold values above Int64.max; keep those that fit.
                    let high = Self.readUInt(bytes, at: start + 1, width: 8)
                    let low = Self.readUInt(bytes, at: start + 9, width: 8)
                    guard high == 0, low <= UInt64(Int64.max) else {
                        throw PropertyListError.corruptBinary(offset: start, reason: "integer does not fit in 64 bits")
                    }
                    return .integer(Int64(low))
                }
                let raw = Self.readUInt(bytes, at: start + 1, width: width)
                return .integer(width == 8 ? Int64(bitPattern: raw) : Int64(raw))
            case 0x2:
                let width = 1 << Int(marker & 0x0F)
                try need(start + 1, width)
                switch width {
                case 4: return .real(Double(Float(bitPattern: UInt32(Self.readUInt(bytes, at: start + 1, width: 4)))))
                case 8: return .real(Double(bitPattern: Self.readUInt(bytes, at: start + 1, width: 8)))
                default: throw PropertyListError.corruptBinary(offset: start, reason: "invalid real width")
                }
            case 0x3:
                guard marker == 0x33 else { throw PropertyListError.corruptBinary(offset: start, reason: "invalid date marker") }
                try need(start + 1, 8)
                return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.readUInt(bytes, at: start + 1, width: 8))))
            case 0x4:
                let (length, body) = try count(at: start)
                try need(body, length)
                return .data(Data(bytes[body..<body + length]))
            case 0x5:
                let (length, body) = try count(at: start)
                try need(body, length)
                return .string(String(decoding: bytes[body..<body + length], as: UTF8.self))
            case 0x6:
                let (length, body) = try count(at: start)
                guard length <= (bytes.count) / 2 else {
                    throw PropertyListError.corruptBinary(offset: start, reason: "string length exceeds the data")
                }
                try need(body, length * 2)
                var units = [UInt16]()
                units.reserveCapacity(length)
                for i in 0..<length { units.append(UInt16(bytes[body + 2 * i]) << 8 | UInt16(bytes[body + 2 * i + 1])) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0xA, 0xD:
                guard depth < 512 else { throw PropertyListError.corruptBinary(offset: start, reason: "nesting deeper than 512") }
                guard visiting.insert(index).inserted else {
                    throw PropertyListError.corruptBinary(offset: start, reason: "object \(index) contains itself")
                }
                defer { visiting.remove(index) }
                let (length, body) = try count(at: start)
                let isDictionary = marker >> 4 == 0xD
                guard length <= bytes.count / refSize else {
                    throw PropertyListError.corruptBinary(offset: start, reason: "collection length exceeds the data")
                }
                try need(body, length * refSize * (isDictionary ? 2 : 1))
                func ref(_ i: Int) -> Int { Int(Self.readUInt(bytes, at: body + i * refSize, width: refSize)) }
                if !isDictionary {
                    var elements = [PlistValue]()
                    elements.reserveCapacity(length)
                    for i in 0..<length { elements.append(try object(at: ref(i), depth: depth + 1)) }
                    return .array(elements)
                }
                var dictionary = [String: PlistValue](minimumCapacity: length)
                for i in 0..<length {
                    guard case .string(let key) = try object(at: ref(i), depth: depth + 1) else {
                        throw PropertyListError.corruptBinary(offset: start, reason: "dictionary key is not a string")
                    }
                    dictionary[key] = try object(at: ref(length + i), depth: depth + 1)
                }
                return .dictionary(dictionary)
            default:
                throw PropertyListError.corruptBinary(
                    offset: start, reason: "unsupported object marker 0x\(String(marker, radix: 16)) (UIDs and sets are not property-list values)")
            }
        }
    }
}
