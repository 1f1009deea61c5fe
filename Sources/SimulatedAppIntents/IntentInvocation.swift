/// An intent's name and parameters as an intent executable's command line
/// gives them: `AddNoteIntent text=milk count=2`, as the built-in
/// `intent-extension` takes them. Launch arguments (`-key value`, Apple's
/// pairs) are the argument domain's and are skipped here: a word after a
/// `-key` that does not start with `-` is that key's value.
package struct IntentInvocation: Equatable {
    let name: String
    let parameters: [String: String]

    /// nil for words with neither name nor parameters (a line of only launch arguments, or none).
    static func parse(_ words: [String]) throws(IntentRunError) -> IntentInvocation? {
        var name: String?
        var parameters: [String: String] = [:]
        for word in withoutLaunchArguments(words) {
            let equals = word.firstIndex(of: "=")
            if name == nil {
                guard equals == nil else {
                    throw .invalid("'\(word)' comes before the intent's name: name the intent first, e.g. AddNoteIntent \(word)")
                }
                name = word
                continue
            }
            guard let equals, equals != word.startIndex else {
                throw .invalid("'\(word)' is not a parameter: parameters are NAME=VALUE (e.g. text=milk), after the intent's name \(name!)")
            }
            let key = String(word[..<equals])
            guard parameters[key] == nil else { throw .invalid("parameter \(key) is given twice; give it once") }
            parameters[key] = String(word[word.index(after: equals)...])
        }
        guard let name else {
            if parameters.isEmpty { return nil }
            throw .invalid("parameters without an intent's name")
        }
        return IntentInvocation(name: name, parameters: parameters)
    }

    /// A widget's configuration from its command line: the `NAME=VALUE` words, launch arguments and words without `=`
    /// (a subcommand) left out.
    package static func assignments(in words: [String]) throws(IntentRunError) -> [String: String] {
        var parameters: [String: String] = [:]
        for word in withoutLaunchArguments(words) {
            guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { continue }
            let key = String(word[..<equals])
            guard parameters[key] == nil else { throw .invalid("parameter \(key) is given twice; give it once") }
            parameters[key] = String(word[word.index(after: equals)...])
        }
        return parameters
    }

    /// The words that are not Apple's launch arguments (`-key value`: a word after a `-key` that does not start with
    /// `-` is that key's value).
    private static func withoutLaunchArguments(_ words: [String]) -> [String] {
        var kept: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word.hasPrefix("-"), word.count > 1 {
                if index < words.count, !words[index].hasPrefix("-") { index += 1 }
                continue
            }
            kept.append(word)
        }
        return kept
    }

    /// Splits a typed line into words: spaces separate, single and double quotes keep spaces.
    static func words(of line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var started = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                started = true
            } else if character == " " || character == "\t" {
                if started || !current.isEmpty { words.append(current) }
                current = ""
                started = false
            } else {
                current.append(character)
            }
        }
        if started || !current.isEmpty { words.append(current) }
        return words
    }
}
