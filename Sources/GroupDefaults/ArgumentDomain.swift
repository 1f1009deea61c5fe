import Foundation
import PropertyList

/// Launch arguments as UserDefaults reads them:
///
/// - `-key value` sets `key`, but only when `value` does not itself start
///   with `-`: in `-verbose -theme dark` the word after `-verbose` is the next
///   key, so only `theme` is set; `-neg -7` sets nothing.
/// - The value is trimmed of surrounding white space.
/// - A value that then starts with `{ [ ( < "` is read as a property list:
///   an XML one (`<integer>5</integer>`, `<true/>`, a whole `<plist>`) or an
///   old-style one (`(a, b)`, `{ k = v; }`, `<0a1b>`, `"quoted"`). One that
///   does not parse is kept as the string it is, with a warning: a launch
///   never fails over an argument.
/// - Anything else is a string: `-flag YES` is "YES", which `bool(forKey:)`
///   reads as true, and `-n 5` is "5", which `integer(forKey:)` reads as 5.
package enum ArgumentDomain {
    /// The argument domain of `arguments`; each value kept as a string because
    /// it did not parse is reported to `report`.
    public static func parse(
        _ arguments: [String], report: (Diagnostic) -> Void = Diagnostics.report
    ) -> [String: PlistValue] {
        var domain: [String: PlistValue] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("-"), argument.count > 1, index + 1 < arguments.count,
                !arguments[index + 1].hasPrefix("-")
            else {
                // Not a key with a value: the next word is looked at on its own
                // (after `-verbose`, `-theme` may start a pair).
                index += 1
                continue
            }
            let key = String(argument.dropFirst())
            domain[key] = value(arguments[index + 1], key: key, report: report)
            index += 2
        }
        return domain
    }

    /// One argument's value: a property list if it starts like one and parses,
    /// else the (trimmed) text as a string.
    public static func value(_ text: String, key: String, report: (Diagnostic) -> Void = Diagnostics.report) -> PlistValue {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let first = trimmed.first, OldStylePropertyList.openers.contains(first) else { return .string(trimmed) }
        do {
            return try propertyList(trimmed)
        } catch {
            report(
                Diagnostic(
                    kind: .launchArgumentKeptAsString,
                    message: "launch argument -\(key): the value starts like a property list but is not one (\(error)); "
                        + "it is kept as the string \(DefaultsError.show(trimmed)). Quote the value so the shell passes it whole, e.g. -\(key) '(a, b)'."
                ))
            return .string(trimmed)
        }
    }

    /// XML when the text opens an element (`<integer>`, `<true/>`, `<?xml`,
    /// `<!DOCTYPE`); otherwise, and for `<0a1b>` data, the old-style format.
    static func propertyList(_ text: String) throws -> PlistValue {
        if looksLikeXML(text) { return try XMLPropertyList.decode(Data(text.utf8)) }
        return try OldStylePropertyList.parse(text)
    }

    static func looksLikeXML(_ text: String) -> Bool {
        guard text.hasPrefix("<") else { return false }
        let afterBracket = text.dropFirst()
        if afterBracket.hasPrefix("?") || afterBracket.hasPrefix("!") { return true }
        // `<0a1b>` is old-style data; a data value's digits never form a whole
        // element name such as `integer` or `true`, so only letters start XML,
        // unless every character up to `>` is a hex digit or a blank.
        guard let next = afterBracket.first, next.isLetter else { return false }
        let inside = afterBracket.prefix(while: { $0 != ">" })
        return !inside.allSatisfy { $0.isHexDigit || $0 == " " }
    }
}
