import Foundation

/// Property-list values as JSON, for the line protocols and `--json` output.
/// Strings, numbers, booleans, arrays and objects map to themselves (an
/// integer has no decimal point, a real always has one); a date is
/// `{"$date": "<ISO 8601>"}` and data is `{"$data": "<base64>"}`.
public enum PlistJSON {
    /// ISO 8601 in UTC with milliseconds and its zone: 2026-11-22T03:40:44.945Z.
    public static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    public static func encode(_ value: PlistValue?) -> String {
        guard let value else { return "null" }
        switch value {
        case .string(let s): return quote(s)
        case .integer(let i): return String(i)
        case .real(let d):
            if !d.isFinite { return quote(XMLPropertyList.formatReal(d)) }
            let text = "\(d)"
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return "{\"$date\":\(quote(timestamp(d)))}"
        case .data(let d): return "{\"$data\":\(quote(d.base64EncodedString()))}"
        case .array(let a): return "[" + a.map { encode($0) }.joined(separator: ",") + "]"
        case .dictionary(let d):
            return "{" + d.keys.sorted().map { quote($0) + ":" + encode(d[$0]) }.joined(separator: ",") + "}"
        }
    }

    public static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Converts a value decoded by `JSONSerialization` back into a plist value.
    /// With `droppingNulls`, a null inside an object means "absent" and is left out.
    public static func decode(_ json: Any, path: String = "value", droppingNulls: Bool = false) throws -> PlistValue {
        if let number = json as? NSNumber, type(of: json) is NSNumber.Type {
            let kind = String(cString: number.objCType)
            if kind == "c" || kind == "B" { return .bool(number.boolValue) }
            if kind == "d" || kind == "f" {
                // JSONSerialization gives 5.0 as a double; keep whole numbers written without a point as integers.
                return .real(number.doubleValue)
            }
            return .integer(number.int64Value)
        }
        switch json {
        case let b as Bool where type(of: json) == Bool.self: return .bool(b)
        case let s as String: return .string(s)
        case let i as Int: return .integer(Int64(i))
        case let d as Double: return .real(d)
        case let array as [Any]: return .array(try array.enumerated().map { try decode($1, path: "\(path)[\($0)]", droppingNulls: droppingNulls) })
        case let object as [String: Any]:
            if object.count == 1, let text = object["$date"] as? String {
                let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
                guard let date = (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: fractional)) else {
                    throw PropertyListError.notAPropertyList(path: path, typeName: "$date \"\(text)\" (expected ISO 8601)")
                }
                return .date(date)
            }
            if object.count == 1, let text = object["$data"] as? String {
                guard let data = Data(base64Encoded: text) else {
                    throw PropertyListError.notAPropertyList(path: path, typeName: "$data that is not base64")
                }
                return .data(data)
            }
            var out: [String: PlistValue] = [:]
            for (key, element) in object {
                if droppingNulls && element is NSNull { continue }
                out[key] = try decode(element, path: "\(path).\(key)", droppingNulls: droppingNulls)
            }
            return .dictionary(out)
        case is NSNull:
            throw PropertyListError.notAPropertyList(path: path, typeName: "null")
        default:
            throw PropertyListError.notAPropertyList(path: path, typeName: String(describing: type(of: json)))
        }
    }
}
