import Foundation
import PropertyList

/// The three property-list readers: whatever one accepts must be within the
/// limits and survive the writers (each format reads back what it wrote).
enum PlistFuzzTargets {
    static func binary(_ data: Data) {
        let whole = try? BinaryPropertyList.decode(data)
        checkReusingDecode(data, whole: whole)
        guard let value = whole else { return }
        if case .dictionary(let dictionary) = value { lastDictionary = ([UInt8](data), dictionary) }
        checkWriters(value)
    }

    /// The last input that decoded to a dictionary, and its decode: the
    /// previous version for the next input's reusing decode (libFuzzer's
    /// inputs are mostly small mutations of one another, so their keys often agree).
    nonisolated(unsafe) static var lastDictionary: (bytes: [UInt8], dictionary: [String: PlistValue])?

    /// A decode reusing the previous dictionary's values gives what a whole decode gives, or fails as it does.
    static func checkReusingDecode(_ data: Data, whole: PlistValue?) {
        guard let previous = lastDictionary, BinaryPropertyList.isBinary(data) else { return }
        let reused = try? PropertyListFormat.decodeDictionary([UInt8](data), reusing: previous)
        let expected: [String: PlistValue]? = if case .dictionary(let dictionary)? = whole { dictionary } else { nil }
        require(
            reused == expected,
            "the decode reusing the previous input's values (that input in base64: \(Data(previous.bytes).base64EncodedString())) gave \(String(describing: reused)), a whole decode \(String(describing: expected))"
        )
    }

    static func xml(_ data: Data) {
        guard let value = try? XMLPropertyList.decode(data) else { return }
        // What the XML reader gives, the XML writer keeps exactly.
        require((try? XMLPropertyList.decode(XMLPropertyList.encode(value))) == value, "XML round trip changed \(value)")
        checkWriters(value)
    }

    static func oldStyle(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        guard let value = try? OldStylePropertyList.parse(text) else { return }
        if holdsOnlyOldStyleTypes(value) {
            // What `defaults read` prints must parse back as the same value.
            let printed = OldStylePropertyList.describe(value)
            require((try? OldStylePropertyList.parse(printed)) == value, "old-style print/parse changed \(value): \(printed)")
        }
        checkWriters(value)
    }

    /// Within the limits; the binary writer's output reads back equal, and the
    /// XML writer's reads back as XML can hold it (whole-second dates, one NaN).
    static func checkWriters(_ value: PlistValue) {
        require(value.nestingDepth() <= PlistLimits.maximumDepth, "a reader accepted \(value.nestingDepth()) levels")
        // A small binary file can expand to millions of values through shared
        // references (within the limit, so valid); writing those out costs
        // seconds per input, which would starve the search. Small values only.
        guard valueCount(value, upTo: 20_000) <= 20_000 else { return }
        require(value == value && value.hashValue == value.hashValue, "a value is not equal to itself")
        let binary = BinaryPropertyList.encode(value)
        require((try? BinaryPropertyList.decode(binary)) == value, "binary round trip changed the value")
        let xml = XMLPropertyList.encode(value)
        do {
            let back = try XMLPropertyList.decode(xml)
            require(back == asXMLHoldsIt(value), "XML round trip changed the value")
        } catch {
            fatalError("the XML writer wrote what the XML reader refuses: \(error)\n\(String(decoding: xml, as: UTF8.self).prefix(2000))")
        }
    }

    /// How many values `value` holds, itself included, counting no further than past `limit`.
    static func valueCount(_ value: PlistValue, upTo limit: Int) -> Int {
        var count = 0
        var pending = [value]
        while let next = pending.popLast(), count <= limit {
            count += 1
            switch next {
            case .array(let elements): pending += elements
            case .dictionary(let entries): pending += entries.values
            default: break
            }
        }
        return count
    }

    /// Strings, data, arrays and dictionaries: all the old-style format holds.
    static func holdsOnlyOldStyleTypes(_ value: PlistValue) -> Bool {
        switch value {
        case .string, .data: true
        case .array(let elements): elements.allSatisfy(holdsOnlyOldStyleTypes)
        case .dictionary(let entries): entries.values.allSatisfy(holdsOnlyOldStyleTypes)
        default: false
        }
    }

    /// The value as the XML form keeps it: dates as whole seconds within its
    /// range (formatDate's rule), every NaN as the one NaN "nan" reads back as.
    static func asXMLHoldsIt(_ value: PlistValue) -> PlistValue {
        switch value {
        case .real(let d) where d.isNaN: .real(.nan)
        case .date(let date):
            .date(
                Date(
                    timeIntervalSinceReferenceDate: (try? XMLPropertyList.decode(
                        Data("<date>\(XMLPropertyList.formatDate(date))</date>".utf8)))?.dateValue?.timeIntervalSinceReferenceDate ?? .nan))
        case .array(let elements): .array(elements.map(asXMLHoldsIt))
        case .dictionary(let entries): .dictionary(entries.mapValues(asXMLHoldsIt))
        default: value
        }
    }
}
