import Foundation

/// Apple's binary property-list format ("bplist00"), written and read here
/// rather than through `PropertyListSerialization`: it is on every commit's
/// path, and it keeps `bool` and `integer` apart exactly.
package enum BinaryPropertyList {
    static let magic: [UInt8] = Array("bplist00".utf8)

    package static func isBinary(_ data: Data) -> Bool {
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

    package static func encode(_ root: PlistValue) -> Data {
        Data(encodedBytes(root))
    }

    /// `encode`'s bytes as an array, for callers that write them (no `Data` in between).
    package static func encodedBytes(_ root: PlistValue) -> [UInt8] {
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
    package static func decode(_ data: Data, maximumSize: Int = PlistLimits.maximumFileSize) throws -> PlistValue {
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

}

extension PlistValue {
    /// An array or a dictionary: an object that refers to others.
    var isCollection: Bool {
        switch self {
        case .array, .dictionary: true
        default: false
        }
    }
}
