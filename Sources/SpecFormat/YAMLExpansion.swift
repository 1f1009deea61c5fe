// libyaml's event API, as Yams (which links it) uses it: the events show every
// alias before anything is expanded. Yams does not expose them itself.
import CYaml
import PropertyList

/// Bounds what aliases can make of a small YAML file, checked on libyaml's
/// event stream before Yams composes the file.
///
/// Yams composes an alias by sharing its anchor's node, so composing stays
/// cheap, but every walk of the tree pays for the expanded size: Yams'
/// duplicate-key check hashes each key (an aliased key is hashed whole),
/// and reading a value, describing a step or writing an inline app out
/// visits every copy. Forty nested aliases that each double the one before
/// are 2^40 values from a 1 KB file. So the file is refused when aliases
/// would add more than `maximumAliasExpansion` values, or when lists and
/// mappings, aliases expanded, nest more than `maximumNesting` deep.
enum YAMLExpansion {
    /// Values that aliases may add to one file, each alias counting its anchor's whole value.
    static let maximumAliasExpansion = 100_000

    /// Lists and mappings nested in a file, aliases expanded: a value may nest
    /// `PlistLimits.maximumDepth` deep inside the file's own structure.
    static let maximumNesting = PlistLimits.maximumDepth + 16

    /// Throws a `SpecError` at the alias or collection that crosses a limit.
    /// YAML that libyaml cannot parse passes: composing it reports the error.
    package static func check(_ text: String, file: String) throws {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return }
        try bytes.withUnsafeBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var walk = Walk(file: file)
            var event = yaml_event_t()
            while yaml_parser_parse(&parser, &event) == 1 {
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { return }
                try walk.step(event)
            }
        }
    }

    /// The walk over one file's events: a frame per open list or mapping.
    struct Walk {
        let file: String
        /// Each anchor's value: how many values it holds and how deep it nests.
        var anchors: [String: (size: Int, depth: Int)] = [:]
        var frames: [(size: Int, childDepth: Int, anchor: String?)] = []
        var addedByAliases = 0

        init(file: String) { self.file = file }

        mutating func step(_ event: yaml_event_t) throws {
            let mark = event.start_mark
            func error(_ message: String) -> SpecError {
                SpecError(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1, message: message)
            }
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                anchors = [:]
            case YAML_SCALAR_EVENT:
                finish(size: 1, depth: 0, anchor: Self.text(event.data.scalar.anchor))
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                guard frames.count < YAMLExpansion.maximumNesting else {
                    throw error(
                        "lists and mappings nest more than \(YAMLExpansion.maximumNesting) deep here; a value may nest at most \(PlistLimits.maximumDepth) deep"
                    )
                }
                let anchor = event.type == YAML_SEQUENCE_START_EVENT ? event.data.sequence_start.anchor : event.data.mapping_start.anchor
                frames.append((1, 0, Self.text(anchor)))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let frame = frames.popLast() else { return }
                finish(size: frame.size, depth: frame.childDepth + 1, anchor: frame.anchor)
            case YAML_ALIAS_EVENT:
                // An undefined alias is Yams' error to report.
                guard let name = Self.text(event.data.alias.anchor), let target = anchors[name] else { return }
                addedByAliases += target.size
                if addedByAliases > YAMLExpansion.maximumAliasExpansion {
                    throw error(
                        "aliases expand this file past \(YAMLExpansion.maximumAliasExpansion) values (each alias stands for a copy of its anchor's whole value); write the values out or use fewer aliases"
                    )
                }
                if frames.count + target.depth > YAMLExpansion.maximumNesting {
                    throw error(
                        "with the alias *\(name) expanded, lists and mappings nest more than \(YAMLExpansion.maximumNesting) deep here; a value may nest at most \(PlistLimits.maximumDepth) deep"
                    )
                }
                finish(size: target.size, depth: target.depth, anchor: nil)
            default:
                break
            }
        }

        /// A value is complete: remember it under its anchor and count it in its parent.
        mutating func finish(size: Int, depth: Int, anchor: String?) {
            if let anchor { anchors[anchor] = (size, depth) }
            guard !frames.isEmpty else { return }
            frames[frames.count - 1].size = min(frames[frames.count - 1].size + size, Int.max / 2)
            frames[frames.count - 1].childDepth = max(frames[frames.count - 1].childDepth, depth)
        }

        static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
        }
    }
}
