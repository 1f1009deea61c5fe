import PropertyList

/// What orders two writes of one key: the writing device's clock (as iCloud
/// does, so a device whose clock runs fast wins), then, for writes in the
/// same millisecond, the device's name and the write's sequence number on
/// that device. The order is total, so every device and the server pick the
/// same winner, and applying a change twice, or two changes in either order,
/// ends in the same state.
public struct ChangeStamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970 on the writing device's clock (skew included).
    public var time: Int64
    public var device: String
    /// Unique per device and store: with `device`, this change's id.
    public var sequence: Int64

    public init(time: Int64, device: String, sequence: Int64) {
        self.time = time
        self.device = device
        self.sequence = sequence
    }

    public static func < (a: ChangeStamp, b: ChangeStamp) -> Bool {
        if a.time != b.time { return a.time < b.time }
        if a.device != b.device { return a.device.utf8.lexicographicallyPrecedes(b.device.utf8) }
        return a.sequence < b.sequence
    }

    public var description: String { "\(device)#\(sequence)@\(time)" }

    package var fields: [String: PlistValue] {
        ["time": .integer(time), "device": .string(device), "sequence": .integer(sequence)]
    }

    package init(fields: [String: PlistValue], at path: String) throws(CloudFormatError) {
        time = try fields.integer("time", at: path)
        device = try fields.string("device", at: path)
        sequence = try fields.integer("sequence", at: path)
    }
}

/// One key's state in the cloud: its value (nil once removed: removals are
/// kept, so an older write arriving late cannot bring the key back), the
/// write that set it, and the store revision at which it last changed.
public struct CloudRecord: Sendable, Equatable {
    public var key: String
    public var value: PlistValue?
    public var stamp: ChangeStamp
    public var revision: Int64

    public init(key: String, value: PlistValue?, stamp: ChangeStamp, revision: Int64) {
        self.key = key
        self.value = value
        self.stamp = stamp
        self.revision = revision
    }

    public var plist: PlistValue {
        var fields = stamp.fields
        fields["key"] = .string(key)
        fields["revision"] = .integer(revision)
        if let value { fields["value"] = value }
        return .dictionary(fields)
    }

    public init(_ plist: PlistValue, at path: String) throws(CloudFormatError) {
        let fields = try plist.fields(at: path)
        key = try fields.string("key", at: path)
        value = fields["value"]
        stamp = try ChangeStamp(fields: fields, at: path)
        revision = try fields.integer("revision", at: path)
    }
}

/// A message or a file of the cloud that does not have the expected shape.
public struct CloudFormatError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension PlistValue {
    package func fields(at path: String) throws(CloudFormatError) -> [String: PlistValue] {
        guard case .dictionary(let fields) = self else { throw CloudFormatError("\(path) must be an object, found \(typeNameWithArticle)") }
        return fields
    }
}

extension Dictionary where Key == String, Value == PlistValue {
    package func integer(_ name: String, at path: String) throws(CloudFormatError) -> Int64 {
        guard case .integer(let number)? = self[name] else { throw CloudFormatError("\(path).\(name) must be an integer") }
        return number
    }

    package func string(_ name: String, at path: String) throws(CloudFormatError) -> String {
        guard case .string(let text)? = self[name] else { throw CloudFormatError("\(path).\(name) must be a string") }
        return text
    }

    package func bool(_ name: String, at path: String, default fallback: Bool) throws(CloudFormatError) -> Bool {
        guard let field = self[name] else { return fallback }
        guard case .bool(let flag) = field else { throw CloudFormatError("\(path).\(name) must be true or false") }
        return flag
    }

    package func array(_ name: String, at path: String) throws(CloudFormatError) -> [PlistValue] {
        guard let field = self[name] else { return [] }
        guard case .array(let items) = field else { throw CloudFormatError("\(path).\(name) must be an array") }
        return items
    }

    package func dictionary(_ name: String, at path: String) throws(CloudFormatError) -> [String: PlistValue] {
        guard let field = self[name] else { return [:] }
        guard case .dictionary(let members) = field else { throw CloudFormatError("\(path).\(name) must be an object") }
        return members
    }
}
