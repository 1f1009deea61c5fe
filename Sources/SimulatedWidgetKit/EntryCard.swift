import AppProtocol
import Foundation
import PropertyList

/// A timeline entry as a card: one line per stored property, by its label,
/// read through `Mirror` as the widget's view would read the entry. Values
/// a property list holds (strings, numbers, booleans, dates, data, and
/// arrays and string-keyed dictionaries of them) are kept as they are, a
/// URL as its absolute string, nil as absent; anything else (a nested
/// struct, an enum) by its description.
enum EntryCard {
    static func lines(of entry: Any) -> [CardLine] {
        Mirror(reflecting: entry).children.enumerated().map { index, child in
            // An unlabelled child (a tuple's) is named by its position.
            CardLine(key: child.label ?? "\(index)", value: value(child.value), domain: nil)
        }
    }

    static func value(_ value: Any) -> PlistValue? {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first else { return nil }
            return Self.value(wrapped.value)
        }
        switch value {
        case let text as String: return .string(text)
        case let flag as Bool: return .bool(flag)
        case let number as Int: return .integer(Int64(number))
        case let number as Int64: return .integer(number)
        case let number as Int32: return .integer(Int64(number))
        case let number as Int16: return .integer(Int64(number))
        case let number as Int8: return .integer(Int64(number))
        case let number as UInt8: return .integer(Int64(number))
        case let number as UInt16: return .integer(Int64(number))
        case let number as UInt32: return .integer(Int64(number))
        case let number as UInt where number <= UInt(Int64.max): return .integer(Int64(number))
        case let number as UInt64 where number <= UInt64(Int64.max): return .integer(Int64(number))
        case let number as Double: return .real(number)
        case let number as Float: return .real(Double(number))
        case let date as Date: return .date(date)
        case let data as Data: return .data(data)
        case let url as URL: return .string(url.absoluteString)
        default: break
        }
        if mirror.displayStyle == .collection || mirror.displayStyle == .set {
            return .array(mirror.children.map { Self.value($0.value) ?? .string("nil") })
        }
        if mirror.displayStyle == .dictionary, let pairs = value as? [String: Any] {
            return .dictionary(pairs.mapValues { Self.value($0) ?? .string("nil") })
        }
        return .string(String(describing: value))
    }
}
