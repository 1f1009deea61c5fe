@_exported import ChildProcess
import Foundation

/// The project's built executables, run as real processes by the tests.
package enum BuiltExecutable {
    /// The folder holding the built products: `$GROUPSIM_BIN_DIR`, else the
    /// folder of the running test bundle (SwiftPM puts both side by side).
    package static var directory: String {
        if let override = ProcessInfo.processInfo.environment["GROUPSIM_BIN_DIR"] { return override }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("groupsim").path) { return url.path }
        }
        fatalError("cannot find the built groupsim executable near \(CommandLine.arguments[0]); set GROUPSIM_BIN_DIR")
    }

    package static func path(_ name: String) -> String { directory + "/" + name }
}

/// The outcome of a process run to completion.
package struct ProcessResult: Sendable {
    package let status: Int32
    package let stdout: String
    package let stderr: String

    package var trimmedOutput: String { stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// Runs an executable to completion with the given environment additions
/// (killed, and the test failed, if it runs longer than ten minutes).
package func runProcess(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws -> ProcessResult
{
    try runBounded(executable, arguments, environment: environment, stdin: stdin, timeout: 600)
}

/// `groupsim` with a simulation root.
package func groupsim(_ arguments: [String], root: TemporaryRoot, stdin: Data? = nil) throws -> ProcessResult {
    try runProcess(BuiltExecutable.path("groupsim"), arguments, environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"], stdin: stdin)
}

/// Runs the test suite's load generator (`groupsim-stress`) on the root's iPhone.
package func groupsimStress(_ arguments: [String], root: TemporaryRoot) throws -> ProcessResult {
    try runProcess(BuiltExecutable.path("groupsim-stress"), arguments, environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
}

/// Starts several processes of one built executable at once and waits for
/// all; returns their results in order.
package func runConcurrently(_ commands: [[String]], executable: String = "groupsim", root: TemporaryRoot) throws -> [ProcessResult] {
    let results = UnsafeSendableBox([ProcessResult?](repeating: nil, count: commands.count))
    let errors = UnsafeSendableBox([Error?](repeating: nil, count: commands.count))
    DispatchQueue.concurrentPerform(iterations: commands.count) { index in
        do {
            let result = try runProcess(
                BuiltExecutable.path(executable), commands[index],
                environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
            results.update { $0[index] = result }
        } catch let failure {
            errors.update { $0[index] = failure }
        }
    }
    if let error = errors.value.compactMap({ $0 }).first { throw error }
    return results.value.map { $0! }
}

/// Unchecked Sendable: the value is read and changed under `lock`.
package final class UnsafeSendableBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    package init(_ value: T) { stored = value }
    package var value: T { lock.withLock { stored } }
    package func update(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}
