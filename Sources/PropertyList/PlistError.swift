/// What the package's own readers and checks refuse, beside the public
/// `PropertyListError` (a file or data that is not a property list, which
/// users of the products may catch): JSON text of the line protocols, a JSON
/// value that is no property-list value, a value past `PlistLimits`. Each
/// case carries where (the byte, the key path); `description` is the one
/// place these become text.
package enum PlistError: Error, Equatable, CustomStringConvertible {
    /// JSON that does not parse, at a byte.
    case jsonSyntax(reason: String, offset: Int)
    /// A JSON value read whole but refused (a number out of range, a repeated key, a lone surrogate, text after it):
    /// at `location` (a key path, "" at the top), at a byte; `partialObject`: the object it was in, refused values as null.
    case jsonValueRefused(location: String, reason: String, offset: Int, partialObject: [String: JSONValue]?)
    /// A line protocol's line that is valid JSON but not an object (`text`: its first 200 characters).
    case notAJSONObject(text: String)
    case tooManyJSONValues(limit: Int, offset: Int)
    /// JSON nested deeper than `limit`; `location`: the field it is under, or "the JSON value".
    case jsonTooDeep(location: String, limit: Int, offset: Int)
    /// A JSON value at `path` that is no property-list value.
    case notAPlistValue(path: String, JSONValueProblem)
    /// A value (`what` names it) nested deeper than `limit`, which no reader accepts.
    case tooDeep(what: String, limit: Int)

    /// Why a JSON value is no property-list value.
    package enum JSONValueProblem: Equatable, Sendable {
        case null
        /// A `$date` that is no ISO 8601 date within range.
        case notADate(String)
        case notBase64
        /// A `$real` that is none of nan, +infinity, -infinity (its first 40 characters).
        case notASpecialReal(String)
    }

    /// The 0-based byte offset of JSON text the problem was found at (nil
    /// for a value refused after reading, such as a `$date` that is not a date).
    package var offset: Int? {
        switch self {
        case .jsonSyntax(_, let offset), .jsonValueRefused(_, _, let offset, _), .tooManyJSONValues(_, let offset), .jsonTooDeep(_, _, let offset):
            offset
        case .notAJSONObject: 0
        case .notAPlistValue, .tooDeep: nil
        }
    }

    /// When the text is a well-formed object and only something inside it was
    /// refused: that object, the refused values read as null, so that a line
    /// protocol can still answer with the request's id.
    package var partialObject: [String: JSONValue]? {
        if case .jsonValueRefused(_, _, _, let object) = self { object } else { nil }
    }

    package var description: String {
        switch self {
        case .jsonSyntax(let reason, let offset): "invalid JSON at byte \(offset): \(reason)"
        case .jsonValueRefused(let location, let reason, let offset, _):
            (location.isEmpty ? reason : "\(location): \(reason)") + " (at byte \(offset))"
        case .notAJSONObject(let text): "not a JSON object: \(text)"
        case .tooManyJSONValues(let limit, let offset):
            "the JSON text holds more than \(limit) values, more than a property list may (at byte \(offset))"
        case .jsonTooDeep(let location, let limit, let offset):
            "\(location) nests arrays and objects more than \(limit) deep, which no property-list reader accepts; flatten it (at byte \(offset))"
        case .notAPlistValue(let path, .null): "\(path) is null, which is not a property-list value (a key is removed with remove, not set to null)"
        case .notAPlistValue(let path, .notADate(let text)):
            "\(path): $date \(PlistJSON.quote(text)) is not an ISO 8601 date and time within ±285,000 years of 2001 (e.g. 2024-05-01T12:00:00.000Z)"
        case .notAPlistValue(let path, .notBase64): "\(path): $data is not base64"
        case .notAPlistValue(let path, .notASpecialReal(let text)):
            "\(path): $real \(PlistJSON.quote(text)) is not nan, +infinity or -infinity (a finite real is a JSON number)"
        case .tooDeep(let what, let limit):
            "\(what) nests arrays and dictionaries more than \(limit) deep, which no reader accepts "
                + "(a file holds at most \(PlistLimits.maximumDepth) levels); flatten it"
        }
    }
}

extension PlistError {
    /// A JSON value's problem found below `outer` (a key path, or its next step `.key`, `[2]`): its path with `outer` before it.
    func under(_ outer: String) -> PlistError {
        guard case .notAPlistValue(let path, let problem) = self else { return self }
        return .notAPlistValue(path: outer + path, problem)
    }
}
