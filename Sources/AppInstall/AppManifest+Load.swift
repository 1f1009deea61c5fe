import AppModel
import SharedFiles
import SpecFormat

extension AppManifest {
    /// The manifest in the file at `path` (a person named it: links are followed, only a regular file is read).
    package static func load(_ path: String) throws -> AppManifest {
        try parse(SpecNode.load(path) { try readNamedFile($0) })
    }
}
