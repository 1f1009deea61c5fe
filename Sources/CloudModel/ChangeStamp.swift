import PropertyList

/// What orders two writes of one key: the writing device's clock (as iCloud
/// does, so a device whose clock runs fast wins), then, for writes in the
/// same millisecond, the device's name and the write's sequence number on
/// that device. The order is total, so every device and the server pick the
/// same winner, and applying a change twice, or two changes in either order,
/// ends in the same state.
package struct ChangeStamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970 on the writing device's clock (skew included).
    package var time: Int64
    package var device: String
    /// Unique per device and store: with `device`, this change's id.
    package var sequence: Int64

    package init(time: Int64, device: String, sequence: Int64) {
        self.time = time
        self.device = device
        self.sequence = sequence
    }

    /// Device names compare as bytes, as the order does: "Café" composed and
    /// decomposed are two devices (String's == would call them one).
    package static func == (a: ChangeStamp, b: ChangeStamp) -> Bool {
        a.time == b.time && a.sequence == b.sequence && a.device.utf8.elementsEqual(b.device.utf8)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(time)
        hasher.combine(sequence)
        for byte in device.utf8 { hasher.combine(byte) }
    }

    /// Whether `device` is this stamp's device, byte for byte.
    package func isFrom(_ device: String) -> Bool { self.device.utf8.elementsEqual(device.utf8) }

    package static func < (a: ChangeStamp, b: ChangeStamp) -> Bool {
        if a.time != b.time { return a.time < b.time }
        if !a.device.utf8.elementsEqual(b.device.utf8) { return a.device.utf8.lexicographicallyPrecedes(b.device.utf8) }
        return a.sequence < b.sequence
    }

    package var description: String { "\(device)#\(sequence)@\(time)" }

    package var fields: [String: PlistValue] {
        var fields: [String: PlistValue] = Dictionary(minimumCapacity: 3)
        add(to: &fields)
        return fields
    }

    /// Puts the stamp's three fields into `fields` (a record's dictionary holds them beside its own).
    package func add(to fields: inout [String: PlistValue]) {
        fields["time"] = .integer(time)
        fields["device"] = .string(device)
        fields["sequence"] = .integer(sequence)
    }

    /// `path` names the stamp in errors; it is only built for one.
    package init(fields: [String: PlistValue], at path: @autoclosure () -> String) throws(CloudFormatError) {
        time = try fields.integer("time", at: path())
        device = try fields.string("device", at: path())
        sequence = try fields.integer("sequence", at: path())
    }
}

/// The order of two writes of one key, total even when both carry the same
/// stamp (a device restored from a backup stamps new writes with sequence
/// numbers it used before, and may do so in the same millisecond): the stamp
/// first (`ChangeStamp`'s order); for one stamp, a removal before a value,
/// then values by the UTF-8 bytes of their JSON text (`PlistJSON`, keys
/// sorted), then by the bytes of their binary property list (a date and a
/// dictionary `{"$date": …}` have the same JSON text). The cloud and every
/// device keep the greater write, so they all end with the same value.
package enum WriteOrder {
    package static func precedes(_ a: ChangeStamp, _ aValue: PlistValue?, _ b: ChangeStamp, _ bValue: PlistValue?) -> Bool {
        if a != b { return a < b }
        guard let bValue else { return false }
        guard let aValue else { return true }
        if aValue == bValue { return false }
        let (aText, bText) = (PlistJSON.encode(aValue), PlistJSON.encode(bValue))
        if aText != bText { return aText.utf8.lexicographicallyPrecedes(bText.utf8) }
        return BinaryPropertyList.encode(aValue).lexicographicallyPrecedes(BinaryPropertyList.encode(bValue))
    }

    /// Whether `record` is the same write as (stamp, value): the same stamp and the same value.
    package static func same(_ a: ChangeStamp, _ aValue: PlistValue?, _ b: ChangeStamp, _ bValue: PlistValue?) -> Bool {
        a == b && aValue == bValue
    }
}

/// One key's state in the cloud: its value (nil once removed: removals are
/// kept, so an older write arriving late cannot bring the key back), the
/// write that set it, and the store revision at which it last changed.
package struct CloudRecord: Sendable, Equatable {
    package var key: String
    package var value: PlistValue?
    package var stamp: ChangeStamp
    package var revision: Int64

    package init(key: String, value: PlistValue?, stamp: ChangeStamp, revision: Int64) {
        self.key = key
        self.value = value
        self.stamp = stamp
        self.revision = revision
    }

    package var plist: PlistValue {
        // Made at its final size: a push or an ack makes one per record.
        var fields: [String: PlistValue] = Dictionary(minimumCapacity: 6)
        stamp.add(to: &fields)
        fields["key"] = .string(key)
        fields["revision"] = .integer(revision)
        if let value { fields["value"] = value }
        return .dictionary(fields)
    }

    /// `path` names the record in errors; it is only built for one.
    package init(_ plist: PlistValue, at path: @autoclosure () -> String) throws(CloudFormatError) {
        let fields = try plist.fields(at: path())
        key = try fields.string("key", at: path())
        value = fields["value"]
        stamp = try ChangeStamp(fields: fields, at: path())
        revision = try fields.revision("revision", at: path())
    }
}

/// A message or a file of the cloud that does not have the expected shape.
package struct CloudFormatError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }

    /// Text from outside, quoted for a message: escaped, and cut at 80
    /// characters, so one hostile field cannot make a huge or broken message.
    package static func brief(_ text: String) -> String {
        let cut = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return PlistJSON.quote(cut) + (text.count > 80 ? " (\(text.utf8.count) bytes)" : "")
    }

    /// Text from outside, for a field of a log line (which escapes it): as it
    /// is up to `bytes` bytes of UTF-8, else cut there (at a whole scalar)
    /// with its full length said, so a stranger's 60 kB path costs the log
    /// what a short one does.
    package static func cut(_ text: String, bytes limit: Int) -> String {
        let length = text.utf8.count
        guard length > limit else { return text }
        var kept = String.UnicodeScalarView()
        var size = 0
        for scalar in text.unicodeScalars {
            size += UTF8.width(scalar)
            guard size <= limit else { break }
            kept.append(scalar)
        }
        return String(kept) + "… (\(length) bytes)"
    }

    /// A name in a field path: as it is when short and plain, else `brief`.
    package static func name(_ text: String) -> String {
        let plain = text.count <= 80 && text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0 != "\"" && $0 != "\\" && $0.value != 0x7F }
        return plain ? text : brief(text)
    }
}

extension PlistValue {
    package func fields(at path: @autoclosure () -> String) throws(CloudFormatError) -> [String: PlistValue] {
        guard case .dictionary(let fields) = self else { throw CloudFormatError("\(path()) must be an object, found \(typeNameWithArticle)") }
        return fields
    }
}

/// Typed fields of a decoded file or message. `path` names where they are,
/// for errors only: an autoclosure, so a reader of many records builds no
/// path for the ones that are fine.
extension Dictionary where Key == String, Value == PlistValue {
    package func integer(_ name: String, at path: @autoclosure () -> String) throws(CloudFormatError) -> Int64 {
        guard case .integer(let number)? = self[name] else { throw CloudFormatError("\(path()).\(name) must be an integer") }
        return number
    }

    package func string(_ name: String, at path: @autoclosure () -> String) throws(CloudFormatError) -> String {
        guard case .string(let text)? = self[name] else { throw CloudFormatError("\(path()).\(name) must be a string") }
        return text
    }

    package func bool(_ name: String, at path: @autoclosure () -> String, default fallback: Bool) throws(CloudFormatError) -> Bool {
        guard let field = self[name] else { return fallback }
        guard case .bool(let flag) = field else { throw CloudFormatError("\(path()).\(name) must be true or false") }
        return flag
    }

    /// A list that must be there (an empty one is written `[]`).
    func requiredArray(_ name: String, at path: @autoclosure () -> String) throws(CloudFormatError) -> [PlistValue] {
        guard self[name] != nil else { throw CloudFormatError("\(path()).\(name) is missing (a list, [] when empty)") }
        return try array(name, at: path())
    }

    /// A revision: a whole number from 0 to `CloudLimits.maximumCounter`
    /// (the cloud counts on from it, one upload at a time).
    package func revision(_ name: String, at path: @autoclosure () -> String) throws(CloudFormatError) -> Int64 {
        let number = try integer(name, at: path())
        guard (0...CloudLimits.maximumCounter).contains(number) else {
            throw CloudFormatError("\(path()).\(name) must be a revision (from 0 to \(CloudLimits.maximumCounter)), found \(number)")
        }
        return number
    }

    package func array(_ name: String, at path: @autoclosure () -> String) throws(CloudFormatError) -> [PlistValue] {
        guard let field = self[name] else { return [] }
        guard case .array(let items) = field else { throw CloudFormatError("\(path()).\(name) must be an array") }
        return items
    }

    package func dictionary(_ name: String, at path: @autoclosure () -> String) throws(CloudFormatError) -> [String: PlistValue] {
        guard let field = self[name] else { return [:] }
        guard case .dictionary(let members) = field else { throw CloudFormatError("\(path()).\(name) must be an object") }
        return members
    }
}
