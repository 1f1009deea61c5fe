import Foundation

/// Apple's binary property-list format ("bplist00"), written and read here
/// rather than through `PropertyListSerialization`: it is on every commit's
/// path, and it keeps `bool` and `integer` apart exactly.
public enum BinaryPropertyList {
    static let magic: [UInt8] = Array("bplist00".utf8)

    public static func isBinary(_ data: Data) -> Bool {
        data.count >= 8 && data.prefix(8).elementsEqual(magic)
    }

    /// Whether every byte is below 0x80, eight at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var position = 0
        var seen: UInt64 = 0
        while position + 8 <= bytes.count {
            seen |= raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            position += 8
        }
        while position < bytes.count {
            seen |= UInt64(bytes[position])
            position += 1
        }
        return seen & 0x8080_8080_8080_8080 == 0
    }

    // MARK: Encoding

    public static func encode(_ root: PlistValue) -> Data {
        Data(encodedBytes(root))
    }

    /// `encode`'s bytes as an array, for callers that write them (no `Data` in between).
    public static func encodedBytes(_ root: PlistValue) -> [UInt8] {
        var writer = Writer(objectCount: objectCount(root))
        return writer.write(root)
    }

    /// How many objects `root` becomes: one per value and one per dictionary key
    /// (values are not uniqued: Apple's writer does it, readers do not need it,
    /// and hashing every value was a third of the encoding time).
    static func objectCount(_ root: PlistValue) -> Int {
        var count = 1
        var collections = [root]
        while let value = collections.popLast() {
            switch value {
            case .array(let elements):
                count += elements.count
                for element in elements where element.isCollection { collections.append(element) }
            case .dictionary(let dictionary):
                count += 2 * dictionary.count
                for element in dictionary.values where element.isCollection { collections.append(element) }
            default: continue
            }
        }
        return count
    }

    /// Writes each object once, straight into the output: a collection's
    /// children get the next object indices when it is written, scalars are
    /// written right after it, and nested collections wait in a work list
    /// (so a deep value cannot exhaust the stack) with their indices reserved.
    private struct Writer {
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

    // MARK: Decoding

    /// Decodes a binary property list. Every number the file gives is checked
    /// before it is used, each object is decoded once however often it is
    /// referenced, and the result is refused if it nests deeper than
    /// `PlistLimits.maximumDepth` or would hold more than
    /// `PlistLimits.maximumValueCount` values once shared references are
    /// counted each time they are used (the work every later compare or encode does).
    /// `maximumSize`: the most bytes accepted (`PlistLimits.maximumFileSize`
    /// unless a file says otherwise). A file allowed to be larger than that may
    /// also hold as many values as it has bytes: this writer gives every value
    /// an object, a reference and an offset of at least a byte each, so only
    /// shared references can count more values than bytes.
    public static func decode(_ data: Data, maximumSize: Int = PlistLimits.maximumFileSize) throws -> PlistValue {
        var reader = try Reader(bytes: [UInt8](data), maximumSize: maximumSize)
        return try reader.value(of: reader.topObject, depth: 0).value
    }

    /// A top-level dictionary, decoded from `bytes`, with values of
    /// `previous` (the same file's last version and its decode) reused where
    /// the two agree: when both are dictionaries of the same keys in the same
    /// order, a value whose object has the same bytes in both (a number, a
    /// string, a date, data) is taken from `previous`, and only the others
    /// are decoded, into a copy of its dictionary. A commit that changed one
    /// key of a large domain then costs each reader a comparison of bytes and
    /// one value's decoding, not the whole file's. `previous.dictionary`
    /// must be what `bytes` decode to; the result, and any error, are a whole decode's.
    static func decodeDictionary(
        _ bytes: [UInt8], reusing previous: (bytes: [UInt8], dictionary: [String: PlistValue])?, maximumSize: Int
    ) throws -> [String: PlistValue] {
        var reader = try Reader(bytes: bytes, maximumSize: maximumSize)
        if let previous, previous.bytes.count <= maximumSize, previous.bytes.starts(with: magic),
            let prior = try? Reader(bytes: previous.bytes, maximumSize: maximumSize),
            // Any error in the comparison is left for the whole decode to report, as it would.
            let reused = try? reader.topDictionary(reusing: prior, decoded: previous.dictionary)
        {
            return reused
        }
        let value = try reader.value(of: reader.topObject, depth: 0).value
        guard case .dictionary(let dictionary) = value else { throw PropertyListError.rootNotDictionary(found: value.typeName) }
        return dictionary
    }

    private struct Reader {
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

        /// The top dictionary, with `prior`'s values (`decoded`, its decode)
        /// where the objects' bytes are the same (`decodeDictionary(_:reusing:maximumSize:)`).
        /// nil when the two are not dictionaries of the same keys in the same
        /// order. Throws where a whole decode would throw (not necessarily the same error).
        mutating func topDictionary(reusing prior: Reader, decoded: [String: PlistValue]) throws -> [String: PlistValue]? {
            guard let top = try dictionary(topObject, reusing: prior, prior.topObject, decoded: decoded, depth: 0) else { return nil }
            guard top.count <= maximumValueCount else { throw tooManyValues(at: try offset(of: topObject)) }
            return top.value
        }

        /// Dictionary object `index`, `depth` collections deep, with the values
        /// of `prior`'s dictionary object `priorIndex` (`decoded`, its decode)
        /// wherever the two files write the same value the same way, and the
        /// values it expands to (as a decode counts them). A dictionary that
        /// changed inside is itself decoded this way, so one changed entry of a
        /// dictionary of dictionaries costs one entry's decoding, and the
        /// unchanged entries stay the previous decode's own (equal at once to
        /// it: the same storage). nil when the two are not dictionaries of the
        /// same keys in the same order: the caller decodes it whole.
        mutating func dictionary(_ index: Int, reusing prior: Reader, _ priorIndex: Int, decoded: [String: PlistValue], depth: Int) throws -> (
            value: [String: PlistValue], count: Int
        )? {
            guard depth < PlistLimits.maximumDepth, slots[index] != Self.inProgress,
                case (let start, _, let length, let body, let priorBody)? = try collectionPair(index, as: prior, priorIndex, only: 0xD),
                length == decoded.count
            else { return nil }
            // As in a whole decode: a value that refers to a dictionary it is in is caught.
            let slot = slots[index]
            slots[index] = Self.inProgress
            defer { slots[index] = slot }

            var changed: [(keyObject: Int, valueObject: Int, priorValue: Int)] = []
            var count = 1
            for i in 0..<length {
                let keyAt = body + i * refSize
                let keyObject = try objectIndex(Self.readUInt(bytes, at: keyAt, width: refSize), at: keyAt)
                let priorKeyAt = priorBody + i * prior.refSize
                let priorKey = try prior.objectIndex(Self.readUInt(prior.bytes, at: priorKeyAt, width: prior.refSize), at: priorKeyAt)
                guard try sameKey(keyObject, as: prior, priorKey) else { return nil }
                let valueAt = body + (length + i) * refSize
                let valueObject = try objectIndex(Self.readUInt(bytes, at: valueAt, width: refSize), at: valueAt)
                let priorValueAt = priorBody + (length + i) * prior.refSize
                let priorValue = try prior.objectIndex(Self.readUInt(prior.bytes, at: priorValueAt, width: prior.refSize), at: priorValueAt)
                if let same = try sameObject(valueObject, as: prior, priorValue, depth: depth + 1, budget: maximumValueCount - count) {
                    count += same.count
                } else {
                    changed.append((keyObject, valueObject, priorValue))
                }
            }
            guard !changed.isEmpty else { return (decoded, count) }
            var dictionary = decoded
            for (keyObject, valueObject, priorValue) in changed {
                guard case .string(let key) = try value(of: keyObject, depth: depth + 1).value else { return nil }
                if case .dictionary(let priorEntry)? = decoded[key],
                    let entry = try self.dictionary(valueObject, reusing: prior, priorValue, decoded: priorEntry, depth: depth + 1)
                {
                    count += entry.count
                    dictionary[key] = .dictionary(entry.value)
                } else {
                    let entry = try value(of: valueObject, depth: depth + 1)
                    count += Int(entry.count)
                    dictionary[key] = entry.value
                }
                if count > maximumValueCount { throw tooManyValues(at: start) }
            }
            return (dictionary, count)
        }

        /// Whether key object `index` is a string with the same bytes as `prior`'s object `priorIndex`.
        func sameKey(_ index: Int, as prior: Reader, _ priorIndex: Int) throws -> Bool {
            guard let keyBytes = try scalarExtent(of: index), bytes[keyBytes.lowerBound] >> 4 == 0x5 || bytes[keyBytes.lowerBound] >> 4 == 0x6,
                let priorKeyBytes = try prior.scalarExtent(of: priorIndex)
            else { return false }
            return Self.same(bytes, keyBytes, prior.bytes, priorKeyBytes)
        }

        /// Whether object `index` is `prior`'s object `priorIndex` written the
        /// same way: a scalar with the same bytes, or a collection of the same
        /// length whose keys and entries are, in the same order. If so, how many
        /// values it expands to (as a decode counts them: shared references
        /// each time) and how deep it nests. nil where they differ, and where a
        /// decode would refuse it (too deep, containing itself, more than
        /// `budget` values): the caller then decodes it.
        mutating func sameObject(_ index: Int, as prior: Reader, _ priorIndex: Int, depth: Int, budget: Int) throws -> (
            count: Int, height: Int
        )? {
            guard budget > 0 else { return nil }
            if let extent = try scalarExtent(of: index) {
                guard let priorExtent = try prior.scalarExtent(of: priorIndex), Self.same(bytes, extent, prior.bytes, priorExtent) else { return nil }
                return (1, 0)
            }
            if sameCollections.isEmpty { sameCollections = Array(repeating: SameCollection(), count: objectCount) }
            let known = sameCollections[index]
            if known.priorIndex >= 0 {
                guard known.priorIndex == priorIndex, Int(known.count) <= budget, depth + Int(known.height) <= PlistLimits.maximumDepth else {
                    return nil
                }
                return (Int(known.count), Int(known.height))
            }
            guard depth < PlistLimits.maximumDepth, slots[index] != Self.inProgress,
                case (_, let marker, let length, let body, let priorBody)? = try collectionPair(index, as: prior, priorIndex)
            else { return nil }
            let isDictionary = marker == 0xD
            let slot = slots[index]
            slots[index] = Self.inProgress
            defer { slots[index] = slot }
            var count = 1
            var height = 0
            for i in 0..<length {
                if isDictionary {
                    let keyAt = body + i * refSize
                    let priorKeyAt = priorBody + i * prior.refSize
                    guard
                        try sameKey(
                            objectIndex(Self.readUInt(bytes, at: keyAt, width: refSize), at: keyAt), as: prior,
                            prior.objectIndex(Self.readUInt(prior.bytes, at: priorKeyAt, width: prior.refSize), at: priorKeyAt))
                    else { return nil }
                }
                let at = body + (isDictionary ? length + i : i) * refSize
                let priorAt = priorBody + (isDictionary ? length + i : i) * prior.refSize
                guard
                    let same = try sameObject(
                        objectIndex(Self.readUInt(bytes, at: at, width: refSize), at: at), as: prior,
                        prior.objectIndex(Self.readUInt(prior.bytes, at: priorAt, width: prior.refSize), at: priorAt), depth: depth + 1,
                        budget: budget - count)
                else { return nil }
                count += same.count
                height = max(height, same.height)
                if count > budget { return nil }
            }
            // Both below Int32.max: at most `maximumValueCount` values, `maximumDepth` deep.
            sameCollections[index] = SameCollection(priorIndex: Int32(priorIndex), count: Int32(count), height: Int32(height + 1))
            return (count, height + 1)
        }

        /// Object `index` and `prior`'s `priorIndex` when both are arrays or
        /// both dictionaries (`only`: of that marker's kind, 0xA or 0xD) of the
        /// same length, with their references in their files: where `index`
        /// starts, its kind, the length, and where each one's references begin.
        /// nil otherwise, for the caller to decode it.
        func collectionPair(_ index: Int, as prior: Reader, _ priorIndex: Int, only: UInt8? = nil) throws -> (
            start: Int, marker: UInt8, length: Int, body: Int, priorBody: Int
        )? {
            let start = try offset(of: index)
            let marker = bytes[start] >> 4
            guard marker == 0xA || marker == 0xD, only == nil || only == marker else { return nil }
            let priorStart = try prior.offset(of: priorIndex)
            guard prior.bytes[priorStart] >> 4 == marker else { return nil }
            let (length, body) = try self.length(at: start)
            let (priorLength, priorBody) = try prior.length(at: priorStart)
            let refsPerEntry = marker == 0xD ? 2 : 1
            let (refBytes, overflow) = length.multipliedReportingOverflow(by: refSize * refsPerEntry)
            guard length == priorLength, !overflow else { return nil }
            let kind: StaticString = marker == 0xD ? "a dictionary" : "an array"
            try need(body, refBytes, for: kind)
            try prior.need(priorBody, length * prior.refSize * refsPerEntry, for: kind)
            return (start, marker, length, body, priorBody)
        }

        /// Where a scalar object's bytes are (marker, length and body, checked
        /// to lie in the objects), for comparing it with another file's; nil for
        /// a collection or an object no decode accepts.
        func scalarExtent(of index: Int) throws -> Range<Int>? {
            let start = try offset(of: index)
            let marker = bytes[start]
            let end: Int
            switch marker >> 4 {
            case 0x0:
                guard marker == 0x08 || marker == 0x09 else { return nil }
                end = start + 1
            case 0x1:
                guard marker & 0x0F <= 4 else { return nil }
                end = start + 1 + (1 << Int(marker & 0x0F))
            case 0x2:
                guard marker & 0x0F == 2 || marker & 0x0F == 3 else { return nil }
                end = start + 1 + (1 << Int(marker & 0x0F))
            case 0x3:
                guard marker == 0x33 else { return nil }
                end = start + 9
            case 0x4, 0x5:
                let (length, body) = try length(at: start)
                end = body + length
            case 0x6:
                let (length, body) = try length(at: start)
                end = body + 2 * length  // length is below the data's size: no overflow
            default: return nil
            }
            try need(start, end - start, for: "an object")
            return start..<end
        }

        /// Whether two files' byte ranges hold the same bytes.
        static func same(_ left: [UInt8], _ leftRange: Range<Int>, _ right: [UInt8], _ rightRange: Range<Int>) -> Bool {
            guard leftRange.count == rightRange.count else { return false }
            return left.withUnsafeBufferPointer { l in
                right.withUnsafeBufferPointer { r in
                    memcmp(l.baseAddress! + leftRange.lowerBound, r.baseAddress! + rightRange.lowerBound, leftRange.count) == 0
                }
            }
        }

        func tooManyValues(at offset: Int) -> PropertyListError {
            corrupt(offset, "the value holds more than \(maximumValueCount) values (shared references counted each time they are used)")
        }
    }
}

extension PlistValue {
    /// An array or a dictionary: an object that refers to others.
    fileprivate var isCollection: Bool {
        switch self {
        case .array, .dictionary: true
        default: false
        }
    }
}
