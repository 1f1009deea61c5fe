import Foundation
import Guarded
import PropertyList

/// One file's last bytes and their decoded contents (see `SharedPlistFile.lastDecoded`).
/// Unchecked Sendable: both are read and changed only under `lock`.
final class DecodedBytes: @unchecked Sendable {
    private let lock = Locked()
    private var bytes: [UInt8] = []
    private var contents: [String: PlistValue]? = nil

    /// The last bytes and their contents (nil before any).
    var last: (bytes: [UInt8], contents: [String: PlistValue])? {
        lock.withLock { contents.map { (bytes, $0) } }
    }

    func remember(_ bytes: [UInt8], as contents: [String: PlistValue]) {
        lock.withLock {
            self.bytes = bytes
            self.contents = contents
        }
    }
}
