import PropertyList

/// Launch arguments as UserDefaults reads them: every `-key value` pair sets
/// `key` in the argument domain. A value starting with `{ [ ( < "` is parsed
/// as a property list (old-style or XML); anything else is a string, so
/// `-flag YES` is the string "YES" (which `bool(forKey:)` reads as true).
public enum ArgumentDomain {
    public static func parse(_ arguments: [String]) throws -> [String: PlistValue] {
        var domain: [String: PlistValue] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("-"), argument.count > 1, index + 1 < arguments.count else {
                index += 1
                continue
            }
            let key = String(argument.dropFirst())
            domain[key] = try value(arguments[index + 1], key: key)
            index += 2
        }
        return domain
    }

    /// One argument's value: a property list if it starts like one, else a string.
    public static func value(_ text: String, key: String) throws -> PlistValue {
        do {
            return try OldStylePropertyList.parseValueArgument(text)
        } catch let error as PropertyListError {
            throw DefaultsError.launchArgument(key: key, reason: "the value starts like a property list but is not one (\(error))")
        }
    }
}
