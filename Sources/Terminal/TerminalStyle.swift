import Foundation
import Guarded

#if canImport(Glibc)
    import Glibc
#endif

/// ANSI styling for terminals; plain text when NO_COLOR is set or stdout is not a terminal.
package struct TerminalStyle: Sendable {
    package let enabled: Bool

    package init(enabled: Bool) { self.enabled = enabled }

    package static func forStandardOutput() -> TerminalStyle {
        TerminalStyle(enabled: isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
    }

    private func wrap(_ code: String, _ text: String) -> String { enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    package func bold(_ text: String) -> String { wrap("1", text) }
    package func dim(_ text: String) -> String { wrap("2", text) }
    package func highlight(_ text: String) -> String { wrap("32", text) }
    package func warning(_ text: String) -> String { wrap("33", text) }
    package func error(_ text: String) -> String { wrap("31", text) }
}

/// The one way to stdout for every executable. A reader that has gone away
/// (`groupsim run | head -1`) ends the process quietly, as it ends the shell's
/// own tools: Foundation's `FileHandle.write` traps on a closed pipe once
/// SIGPIPE is ignored (a process that starts children ignores it), and
/// `print` would go on writing into nothing.
package enum StandardOutput {
    private static let lock = Locked()
    nonisolated(unsafe) private static var cleanup: @Sendable () -> Void = {}
    nonisolated(unsafe) private static var ending = false

    /// What a command with children does before it ends because stdout
    /// failed (it ends them). Runs once, on the writing thread, and must not write to stdout.
    package static func beforeEndingOnClosedOutput(_ body: @escaping @Sendable () -> Void) {
        lock.withLock { cleanup = body }
    }

    /// Writes all of `bytes`, unbuffered; ends the process if stdout failed.
    package static func write(_ bytes: Data) {
        if let failure = attempt(bytes) { end(failure) }
    }

    /// Writes all of `bytes`; the errno if stdout failed.
    static func attempt(_ bytes: Data) -> Int32? {
        bytes.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written >= 0 {
                    offset += written
                    continue
                }
                if errno == EINTR { continue }
                return errno
            }
            return nil
        }
    }

    /// Ends the process after stdout failed with `failure`.
    /// Threads that find it failed too wait for the first one's exit.
    static func end(_ failure: Int32) -> Never {
        let (first, beforeEnding) = lock.withLock { () -> (Bool, @Sendable () -> Void) in
            defer { ending = true }
            return (!ending, cleanup)
        }
        guard first else { while true { pause() } }
        beforeEnding()
        // EPIPE: the reader has all it wanted. Anything else (a full disk
        // under a redirect) is a failure, said where it can still be seen.
        if failure == EPIPE { exit(0) }
        let message = "cannot write to standard output: \(String(cString: strerror(failure)))\n"
        _ = message.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
        exit(74)
    }

    package static func write(_ text: String) { write(Data(text.utf8)) }
}

/// Whole lines to stdout from any thread, never interleaved.
package final class LineWriter: Sendable {
    package static let standardOutput = LineWriter()
    private let lock = Locked()

    package init() {}

    package func write(_ line: String) { writeRaw(line + "\n") }

    /// Writes raw text (no newline added), e.g. a prompt or cursor movements.
    /// A failed stdout ends the process once the writer is released, so
    /// nothing the exit runs (the last saves) can wait on it.
    package func writeRaw(_ text: String) {
        if let failure = lock.withLock({ StandardOutput.attempt(Data(text.utf8)) }) { StandardOutput.end(failure) }
    }

    /// Runs `body` with the writer held, for multi-line redraws.
    package func exclusive(_ body: () -> Void) { lock.withLock(body) }
}
