/// What fails on the control protocol: a request a process refuses (said to
/// the driver; the process keeps running), or a line a driver cannot decode.
/// Each case carries the command, field, event or line involved;
/// `description` is the one place these become text.
package enum AppProtocolError: Error, CustomStringConvertible {
    /// A request the process could not do, with the reason its driver is told (said by the layer that refused it).
    case refused(String)
    /// A request line that is not a JSON object the strict reader takes, or a value that is no property list.
    case unreadableRequest(any Error)
    /// `"suite"` that is not a string; `found`: the value as JSON.
    case suiteNotString(found: String)
    case missingCommand
    case unknownCommand(String)
    /// A field a command needs; `kind`: what it must be, when said.
    case missingField(command: String, field: String, kind: String?)
    case notWholeNumber(command: String, field: String, found: String)
    case notAnObject(command: String, field: String)
    case notStringValues(command: String, field: String, found: String)
    /// `get`'s `"as"` that is none of `known`.
    case unknownTypedRead(found: String, known: [String])
    /// An `append` value too deep to become an item of an array (`limit`: the deepest nesting taken).
    case appendTooDeep(limit: Int)
    case exitStatusOutOfRange(found: Int64, range: ClosedRange<Int>)
    /// A line a driver read that is not a JSON object (`line`: its first 200 characters).
    case notAProtocolLine(reason: any Error, line: String)
    /// A field of `line` (its first 200 characters) that is no property-list value.
    case badLineField(key: String, line: String, reason: any Error)
    /// A line with neither `event` nor `ok` (`line`: its first 200 characters).
    case neitherEventNorResponse(line: String)
    case eventWithoutString(event: String, key: String)
    case eventWithoutInteger(event: String, key: String)
    case renderWithoutEntryDate(kind: String)
    case unknownDeliveryMechanism(String, known: [String])
    case eventExitStatusOutOfRange(Int64)
    case unknownEvent(String)

    package var description: String {
        switch self {
        case .refused(let reason): reason
        case .unreadableRequest(let error): "\(error)"
        case .suiteNotString(let found): "\"suite\" must be a string (a suite name), found \(found)"
        case .missingCommand: "missing \"cmd\" (a string)"
        case .unknownCommand(let name):
            "unknown command \"\(name)\"; known: get set remove forced dump register add-suite remove-suite synchronize clear increment append "
                + "merge reload reload-widgets kvs-get kvs-set kvs-remove kvs-dump kvs-sync perform-intent info search-list ping flush-events exit"
        case .missingField(let command, let field, let kind): "\(command): missing \"\(field)\"" + (kind.map { " (\($0))" } ?? "")
        case .notWholeNumber(let command, let field, let found): "\(command): \"\(field)\" must be a whole number, found \(found)"
        case .notAnObject(let command, let field): "\(command): \"\(field)\" must be an object"
        case .notStringValues(let command, let field, let found): "\(command): \"\(field)\" values must be strings, found \(found)"
        case .unknownTypedRead(let found, let known): "get: \"as\" must be one of \(known.joined(separator: ", ")), found \(found)"
        case .appendTooDeep(let limit):
            "append: value nests arrays and objects more than \(limit) deep, too deep to become an item of an array; flatten it"
        case .exitStatusOutOfRange(let found, let range): "exit: \"status\" must be \(range.lowerBound) to \(range.upperBound), found \(found)"
        case .notAProtocolLine(let reason, let line): "not a protocol line (\(reason)): \(line)"
        case .badLineField(let key, let line, let reason): "field \"\(key)\" of \(line): \(reason)"
        case .neitherEventNorResponse(let line): "neither an event nor a response: \(line)"
        case .eventWithoutString(let event, let key): "\(event) event without a \"\(key)\" string"
        case .eventWithoutInteger(let event, let key): "\(event) event without a whole-number \"\(key)\""
        case .renderWithoutEntryDate(let kind): "render event of kind \(kind) without an \"entryDate\" timestamp"
        case .unknownDeliveryMechanism(let name, let known):
            "delivery event with unknown mechanism \"\(name)\"; known: \(known.joined(separator: ", "))"
        case .eventExitStatusOutOfRange(let status): "exit status \(status) out of range"
        case .unknownEvent(let name): "unknown event \"\(name)\""
        }
    }
}
