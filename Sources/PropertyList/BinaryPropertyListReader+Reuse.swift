import Foundation

/// Decoding a file with the values of its previous version reused where the two files
/// write them the same way (`BinaryPropertyList.decodeDictionary(_:reusing:maximumSize:)`).
extension BinaryPropertyList.Reader {
    /// The top dictionary, with `prior`'s values (`decoded`, its decode)
    /// where the objects' bytes are the same (`decodeDictionary(_:reusing:maximumSize:)`).
    /// nil when the two are not dictionaries of the same keys in the same
    /// order. Throws where a whole decode would throw (not necessarily the same error).
    mutating func topDictionary(reusing prior: Self, decoded: [String: PlistValue]) throws -> [String: PlistValue]? {
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
    mutating func dictionary(_ index: Int, reusing prior: Self, _ priorIndex: Int, decoded: [String: PlistValue], depth: Int) throws -> (
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
    func sameKey(_ index: Int, as prior: Self, _ priorIndex: Int) throws -> Bool {
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
    mutating func sameObject(_ index: Int, as prior: Self, _ priorIndex: Int, depth: Int, budget: Int) throws -> (
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
    func collectionPair(_ index: Int, as prior: Self, _ priorIndex: Int, only: UInt8? = nil) throws -> (
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
}
