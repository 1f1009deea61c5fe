import Foundation

/// Rules for names that become file or folder names.
public enum DomainName {
    public static let global = "NSGlobalDomain"
    public static let argument = "NSArgumentDomain"
    public static let registration = "NSRegistrationDomain"
    public static let languages = "NSLanguagesDomain"
    /// The simulator's name for the managed domain (forced keys and the
    /// managed app configuration), at the top of the search list.
    public static let managed = "NSManagedDomain"

    /// Whether a domain name is an app group's (`group.` prefix).
    /// - Parameter name: The domain name.
    /// - Returns: true for an app group's suite.
    public static func isGroup(_ name: String) -> Bool { name.hasPrefix("group.") }

    /// Refuses names that could escape a folder, are not file names at all,
    /// or would garble the lines that show them.
    /// - Parameters:
    ///   - name: The name to check.
    ///   - what: What the name is, for the error.
    /// - Throws: `DefaultsError.invalidName`, saying what is wrong with it.
    public static func validate(_ name: String, what: String = "domain name") throws {
        let problem: String? =
            if name.isEmpty { "is empty" } else if let unreadable = unreadableCharacter(in: name) { unreadable } else if name.contains("/") {
                "contains '/'"
            } else if name.contains("..") { "contains '..'" } else if name.hasPrefix(".") { "starts with '.'" } else if name.utf8.count > 200 {
                "is longer than 200 bytes"
            } else { nil }
        if let problem { throw DefaultsError.invalidName(name: name, what: what, problem: problem) }
    }

    /// What makes a name unfit to show on one line or to have come from
    /// valid UTF-8: a NUL or another control character, or U+FFFD. nil if none.
    /// Every name is checked for these, suite names too (which may hold '/').
    package static func unreadableCharacter(in name: String) -> String? {
        if name.contains("\0") { return "contains a NUL character" }
        if let (offset, scalar) = name.unicodeScalars.enumerated().first(where: { isControl($0.element) }) {
            return "contains the control character \(codePoint(scalar)) at character \(offset + 1)"
        }
        if let (offset, _) = name.unicodeScalars.enumerated().first(where: { $0.element == "\u{FFFD}" }) {
            return "contains U+FFFD at character \(offset + 1), what bytes that are not UTF-8 are read as (check the name's encoding)"
        }
        return nil
    }

    /// Control characters (C0, DEL, C1) and the Unicode line and paragraph separators.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
