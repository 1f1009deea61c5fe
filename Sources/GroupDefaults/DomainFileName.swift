/// The file a persistent domain is stored in. Apple accepts any suite name,
/// `/` included (a test helper building one from `#file` is common); a name
/// must still become exactly one file inside its folder, so the characters
/// a file name cannot hold as they are are percent-encoded:
///
///     com.example.settings        ->  com.example.settings
///     test.Module/File.testName   ->  test.Module%2FFile.testName
///     ../../escape                ->  %2E%2E%2F.%2E%2Fescape
///
/// `%` itself, `/`, a leading `.` and a `.` that follows another `.` are
/// encoded, so the stem never contains `/` or `..`, never starts with `.`
/// (lock and temporary files do) and decodes back to the one name it came from.
/// Control characters (NUL included) and U+FFFD are refused, as in every name.
extension DomainName {
    /// The longest stem: the lock and temporary files add about 40 bytes to
    /// it, and a file name may have 255.
    static let maximumFileStemBytes = 200

    /// The file name, without `.plist`, that `domain` is stored under.
    /// - Parameter domain: The domain name; any non-empty name.
    /// - Throws: `DefaultsError.invalidName` for an empty name.
    /// - Returns: The stem, safe as one file name.
    public static func fileStem(for domain: String) throws -> String {
        if domain.isEmpty {
            throw DefaultsError.invalidName(name: domain, what: "domain name", problem: "is empty")
        }
        if let unreadable = DomainName.unreadableCharacter(in: domain) {
            throw DefaultsError.invalidName(name: domain, what: "domain name", problem: unreadable)
        }
        // Scalar by scalar: a "." with a combining mark is one Character but
        // still a "." byte at the start of a file name.
        var stem = String.UnicodeScalarView()
        var previous: Unicode.Scalar? = nil
        for scalar in domain.unicodeScalars {
            switch scalar {
            case "%": stem.append(contentsOf: "%25".unicodeScalars)
            case "/": stem.append(contentsOf: "%2F".unicodeScalars)
            case "." where previous == nil || previous == ".": stem.append(contentsOf: "%2E".unicodeScalars)
            default: stem.append(scalar)
            }
            previous = scalar
        }
        let fileStem = String(stem)
        if fileStem.utf8.count > maximumFileStemBytes {
            throw DefaultsError.invalidName(
                name: domain, what: "domain name",
                problem: "is \(fileStem.utf8.count) bytes long as a file name, more than \(maximumFileStemBytes)")
        }
        return fileStem
    }

    /// The domain stored under a file stem; nil if the stem is not one that
    /// `fileStem(for:)` makes (a file put there by someone else).
    /// - Parameter stem: The file's name without `.plist`.
    /// - Returns: The domain name, or nil.
    public static func domain(fromFileStem stem: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = stem.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
        }
        guard let domain = String(validating: bytes, as: UTF8.self), (try? fileStem(for: domain)) == stem else { return nil }
        return domain
    }
}
