import Foundation
import Testing

/// A program some tests drive (tmux, a browser). Where it is missing the
/// test is skipped, except under scripts/test.sh, which installs it and sets
/// `GROUPSIM_NEED_<NAME>=1`: there a missing tool fails the test instead.
package struct ExternalTool: Sendable {
    package let name: String
    package let path: String?
    package let required: Bool

    package init(_ name: String, candidates: [String]) {
        self.name = name
        path = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        required = ProcessInfo.processInfo.environment["GROUPSIM_NEED_\(name.uppercased())"] == "1"
    }

    /// For `.enabled(if:)`: run where it is installed or required.
    package var shouldRun: Bool { path != nil || required }

    package var missing: Comment {
        "\(name) is not installed (scripts/test.sh installs it with GROUPSIM_NEED_\(name.uppercased())=1)"
    }

    /// The tool's path, or nil with the test failed (it runs only where required).
    package func located() -> String? {
        if path == nil { Issue.record(missing) }
        return path
    }
}
