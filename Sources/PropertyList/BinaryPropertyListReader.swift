import Foundation

extension BinaryPropertyList {
    struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let refSize: Int
        let objectCount: Int
        let topObject: Int
        /// Where the offset table starts, which is also where the objects end.
        let offsetTable: Int
        /// The most values the top object may expand to.
        let maximumValueCount: Int

        /// An object decoded: its value, how deep it nests (a scalar is 0) and
        /// how many values it expands to, itself included.
        struct Decoded {
            let value: PlistValue
            let height: UInt16
            let count: UInt32
            static func scalar(_ value: PlistValue) -> Decoded { Decoded(value: value, height: 0, count: 1) }
        }

        /// Collections, long strings and data once decoded, which a later
        /// reference reuses instead of decoding again. Numbers and short
        /// strings (stored inline, no allocation) cost less to decode again.
        var kept: [Decoded] = []
        /// Per object: its index in `kept`, `notKept`, or `inProgress` while a
        /// collection is being decoded (so one that contains itself is caught).
        /// Plain integers: checking them is cheaper than an optional per object.
        var slots: [Int32]
        /// Per object, once a collection is found to be the previous file's:
        /// that file's object, and what it expands to, so a collection that
        /// many references share is compared once (as a decode keeps it).
        /// Empty until the first comparison of a collection.
        var sameCollections: [SameCollection] = []
        struct SameCollection {
            /// -1: not found the same (yet).
            var priorIndex: Int32 = -1
            var count: Int32 = 0
            var height: Int32 = 0
        }
        static let notKept: Int32 = -1
        static let inProgress: Int32 = -2

        /// A reader of data of at most `maximumSize` bytes (`decode`).
        init(bytes: [UInt8], maximumSize: Int) throws {
            guard bytes.count <= maximumSize else {
                throw PropertyListError.corruptBinary(
                    offset: 0, reason: "the data is \(bytes.count) bytes, more than the \(maximumSize) a property list may have")
            }
            // At most Int32.max either way: the reader counts objects in Int32 and values in UInt32.
            let maximumValueCount =
                maximumSize > PlistLimits.maximumFileSize
                ? min(max(PlistLimits.maximumValueCount, bytes.count), Int(Int32.max)) : PlistLimits.maximumValueCount
            try self.init(bytes: bytes, maximumValueCount: maximumValueCount)
        }

        init(bytes: [UInt8], maximumValueCount: Int) throws {
            self.bytes = bytes
            self.maximumValueCount = maximumValueCount
            guard bytes.count >= 8 + 1 + 32, bytes.prefix(8).elementsEqual(BinaryPropertyList.magic) else {
                throw PropertyListError.corruptBinary(offset: 0, reason: "too short or missing the 'bplist00' header")
            }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            refSize = Int(bytes[trailer + 7])
            guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(refSize) else {
                throw PropertyListError.corruptBinary(
                    offset: trailer + 6, reason: "offset size \(offsetSize) or reference size \(refSize) is not 1, 2, 4 or 8")
            }
            let count = Self.readUInt(bytes, at: trailer + 8, width: 8)
            let top = Self.readUInt(bytes, at: trailer + 16, width: 8)
            let table = Self.readUInt(bytes, at: trailer + 24, width: 8)
            // The table lies between the first object and the trailer; the
            // comparisons are made in UInt64, so nothing is converted before it is known to fit.
            guard table > 8, table <= UInt64(trailer) else {
                throw PropertyListError.corruptBinary(
                    offset: trailer + 24, reason: "offset table position \(table) is outside the data (\(bytes.count) bytes)")
            }
            let tableBytes = UInt64(trailer) - table
            guard count > 0, count <= tableBytes / UInt64(offsetSize), count <= table - 8 else {
                throw PropertyListError.corruptBinary(
                    offset: trailer + 8, reason: "object count \(count) is more than the data can hold")
            }
            guard count <= UInt64(maximumValueCount) else {
                throw PropertyListError.corruptBinary(
                    offset: trailer + 8, reason: "object count \(count) is more than the \(maximumValueCount) values a property list may hold")
            }
            guard top < count else {
                throw PropertyListError.corruptBinary(
                    offset: trailer + 16, reason: "top object \(top) is not one of the \(count) objects")
            }
            // Each is below the data's length, so each fits in Int.
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
            slots = Array(repeating: Self.notKept, count: objectCount)
        }

        @inline(__always)
        static func readUInt(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
            if width == 1 { return UInt64(bytes[offset]) }  // the common case, for offsets and references
            var value: UInt64 = 0
            for i in 0..<width { value = (value << 8) | UInt64(bytes[offset + i]) }
            return value
        }

        func corrupt(_ offset: Int, _ reason: String) -> PropertyListError {
            .corruptBinary(offset: offset, reason: reason)
        }

        /// Checks that `length` bytes from `offset` lie inside the object area.
        /// Inlined, with the error built out of line: it runs for every object.
        @inline(__always)
        func need(_ offset: Int, _ length: Int, for what: StaticString) throws {
            guard offset >= 8, length >= 0, offset <= offsetTable, length <= offsetTable - offset else {
                throw runsPast(offset, what)
            }
        }

        @inline(never)
        func runsPast(_ offset: Int, _ what: StaticString) -> PropertyListError {
            corrupt(offset, "\(what) runs past the end of the objects")
        }

        /// A file-given unsigned number as an object index, refused unless it names an object.
        @inline(__always)
        func objectIndex(_ raw: UInt64, at offset: Int) throws -> Int {
            guard raw < UInt64(objectCount) else { throw notAnObject(raw, at: offset) }
            return Int(raw)
        }

        @inline(never)
        func notAnObject(_ raw: UInt64, at offset: Int) -> PropertyListError {
            corrupt(offset, "reference \(raw) is not one of the \(objectCount) objects")
        }

        @inline(__always)
        func offset(of index: Int) throws -> Int {
            let entry = offsetTable + index * offsetSize
            let value = Self.readUInt(bytes, at: entry, width: offsetSize)
            guard value >= 8, value < UInt64(offsetTable) else {
                throw corrupt(entry, "object \(index) has offset \(value), outside the objects (8..<\(offsetTable))")
            }
            return Int(value)
        }

        /// Reads the length of a variable-size object: the low nibble, or a
        /// following integer object; refused if longer than the data.
        @inline(__always)
        func length(at offset: Int) throws -> (length: Int, body: Int) {
            let nibble = Int(bytes[offset] & 0x0F)
            if nibble != 0x0F { return (nibble, offset + 1) }
            try need(offset + 1, 1, for: "a length")
            let marker = bytes[offset + 1]
            guard marker & 0xF0 == 0x10, marker & 0x0F <= 3 else {
                throw corrupt(offset + 1, "invalid length marker 0x\(String(marker, radix: 16))")
            }
            let width = 1 << Int(marker & 0x0F)
            try need(offset + 2, width, for: "a length")
            let value = Self.readUInt(bytes, at: offset + 2, width: width)
            guard value <= UInt64(offsetTable) else {
                throw corrupt(offset + 1, "length \(value) is more than the data holds")
            }
            return (Int(value), offset + 2 + width)
        }

        /// Object `index`, decoded once if it is worth keeping. `depth` is how
        /// many collections enclose it on the path that reached it.
        mutating func value(of index: Int, depth: Int) throws -> Decoded {
            let slot = slots[index]
            if slot >= 0 {
                let known = kept[Int(slot)]
                guard depth + Int(known.height) <= PlistLimits.maximumDepth else {
                    throw corrupt(try offset(of: index), "the value nests arrays and dictionaries deeper than \(PlistLimits.maximumDepth)")
                }
                return known
            }
            let start = try offset(of: index)
            if slot == Self.inProgress { throw corrupt(start, "object \(index) contains itself") }
            let (decoded, keep) = try decodeObject(index, at: start, depth: depth)
            if keep {
                slots[index] = Int32(kept.count)  // fewer objects than PlistLimits.maximumValueCount
                kept.append(decoded)
            }
            return decoded
        }

        /// A 0x5_ string's bytes: ASCII (as Apple's writers make them) or else
        /// valid UTF-8. ASCII is checked first because it is the common case
        /// and String(validating:) is several times slower on it.
        func utf8String(_ body: Int, _ length: Int, object index: Int, at start: Int) throws -> String {
            try bytes.withUnsafeBufferPointer { buffer in
                let slice = UnsafeBufferPointer(rebasing: buffer[body..<body + length])
                if BinaryPropertyList.isASCII(slice) { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw corrupt(start, "string object \(index) is not valid UTF-8")
                }
                return string
            }
        }

        /// Decodes one object, and whether it is worth keeping for later references.
        mutating func decodeObject(_ index: Int, at start: Int, depth: Int) throws -> (Decoded, keep: Bool) {
            let marker = bytes[start]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return (.scalar(.bool(false)), false)
                case 0x09: return (.scalar(.bool(true)), false)
                default: throw corrupt(start, "null or fill objects are not property-list values")
                }
            case 0x1:
                return (.scalar(.integer(try integer(marker, at: start))), false)
            case 0x2:
                switch marker & 0x0F {
                case 2:
                    try need(start + 1, 4, for: "a real")
                    return (.scalar(.real(Double(Float(bitPattern: UInt32(Self.readUInt(bytes, at: start + 1, width: 4)))))), false)
                case 3:
                    try need(start + 1, 8, for: "a real")
                    return (.scalar(.real(Double(bitPattern: Self.readUInt(bytes, at: start + 1, width: 8)))), false)
                default: throw corrupt(start, "invalid real width")
                }
            case 0x3:
                guard marker == 0x33 else { throw corrupt(start, "invalid date marker") }
                try need(start + 1, 8, for: "a date")
                let seconds = Double(bitPattern: Self.readUInt(bytes, at: start + 1, width: 8))
                return (.scalar(.date(Date(timeIntervalSinceReferenceDate: seconds))), false)
            case 0x4:
                let (length, body) = try length(at: start)
                try need(body, length, for: "data")
                return (.scalar(.data(Data(bytes[body..<body + length]))), length > 15)
            case 0x5:
                let (length, body) = try length(at: start)
                try need(body, length, for: "a string")
                return (.scalar(.string(try utf8String(body, length, object: index, at: start))), length > 15)
            case 0x6:
                let (length, body) = try length(at: start)
                return (.scalar(.string(try utf16String(body, length, object: index, at: start))), length > 7)
            case 0xA, 0xD:
                return try decodeCollection(index, at: start, depth: depth, isDictionary: marker >> 4 == 0xD)
            default:
                throw corrupt(start, "unsupported object marker 0x\(String(marker, radix: 16)) (UIDs and sets are not property-list values)")
            }
        }

        /// An integer object: 1, 2, 4 or 8 bytes, or 16 when its value fits in 64 bits.
        func integer(_ marker: UInt8, at start: Int) throws -> Int64 {
            guard marker & 0x0F <= 4 else { throw corrupt(start, "invalid integer width") }
            let width = 1 << Int(marker & 0x0F)
            try need(start + 1, width, for: "an integer")
            if width == 16 {
                // 128-bit integers hold values above Int64.max; keep those that fit.
                let high = Self.readUInt(bytes, at: start + 1, width: 8)
                let low = Self.readUInt(bytes, at: start + 9, width: 8)
                guard high == 0, let fitting = Int64(exactly: low) else {
                    throw corrupt(start, "integer does not fit in 64 bits")
                }
                return fitting
            }
            // 1, 2 and 4-byte integers are unsigned, 8-byte ones signed.
            let raw = Self.readUInt(bytes, at: start + 1, width: width)
            return width == 8 ? Int64(bitPattern: raw) : Int64(raw)
        }

        /// A UTF-16 string object's `length` big-endian units at `body`.
        func utf16String(_ body: Int, _ length: Int, object index: Int, at start: Int) throws -> String {
            try need(body, length * 2, for: "a string")  // length is below the data's size: no overflow
            var units = [UInt16]()
            units.reserveCapacity(length)
            for i in 0..<length { units.append(UInt16(bytes[body + 2 * i]) << 8 | UInt16(bytes[body + 2 * i + 1])) }
            guard let string = String(validating: units, as: UTF16.self) else {
                throw corrupt(start, "string object \(index) is not valid UTF-16 (an unpaired surrogate)")
            }
            return string
        }

        mutating func decodeCollection(_ index: Int, at start: Int, depth: Int, isDictionary: Bool) throws -> (Decoded, keep: Bool) {
            guard depth < PlistLimits.maximumDepth else {
                throw corrupt(start, "the value nests arrays and dictionaries deeper than \(PlistLimits.maximumDepth)")
            }
            let (length, body) = try length(at: start)
            let refsPerEntry = isDictionary ? 2 : 1
            let (refBytes, overflow) = length.multipliedReportingOverflow(by: refSize * refsPerEntry)
            guard !overflow else { throw corrupt(start, "collection length \(length) is more than the data holds") }
            try need(body, refBytes, for: isDictionary ? "a dictionary" : "an array")
            slots[index] = Self.inProgress
            defer { slots[index] = Self.notKept }

            // Written out rather than in local functions: those capture the
            // reader, and copying it per call tripled the decoding time.
            var height = 0
            var count = 1
            if !isDictionary {
                var elements = [PlistValue]()
                elements.reserveCapacity(length)
                for i in 0..<length {
                    let at = body + i * refSize
                    let element = try value(of: try objectIndex(Self.readUInt(bytes, at: at, width: refSize), at: at), depth: depth + 1)
                    elements.append(element.value)
                    height = max(height, Int(element.height))
                    count += Int(element.count)
                    if count > maximumValueCount { throw tooManyValues(at: start) }
                }
                return (Decoded(value: .array(elements), height: UInt16(height + 1), count: UInt32(count)), true)
            }
            var dictionary = [String: PlistValue](minimumCapacity: length)
            for i in 0..<length {
                let keyAt = body + i * refSize
                let keyObject = try objectIndex(Self.readUInt(bytes, at: keyAt, width: refSize), at: keyAt)
                guard case .string(let key) = try value(of: keyObject, depth: depth + 1).value else {
                    throw corrupt(keyAt, "dictionary key (object \(keyObject)) is not a string")
                }
                let valueAt = body + (length + i) * refSize
                let entry = try value(of: try objectIndex(Self.readUInt(bytes, at: valueAt, width: refSize), at: valueAt), depth: depth + 1)
                guard dictionary.updateValue(entry.value, forKey: key) == nil else {
                    throw corrupt(keyAt, "key \"\(key)\" appears twice in one dictionary")
                }
                height = max(height, Int(entry.height))
                count += Int(entry.count)
                if count > maximumValueCount { throw tooManyValues(at: start) }
            }
            return (Decoded(value: .dictionary(dictionary), height: UInt16(height + 1), count: UInt32(count)), true)
        }

        func tooManyValues(at offset: Int) -> PropertyListError {
            corrupt(offset, "the value holds more than \(maximumValueCount) values (shared references counted each time they are used)")
        }
    }
}
