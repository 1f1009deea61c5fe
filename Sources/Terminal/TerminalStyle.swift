import Foundation

/// ANSI styling for terminals; plain text when NO_COLOR is set or stdout is not a terminal.
public struct TerminalStyle: Sendable {
    public let enabled: Bool

    public init(enabled: Bool) { self.enabled = enabled }

    public static func forStandardOutput() -> TerminalStyle {
        TerminalStyle(enabled: isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
    }

    private func wrap(_ code: String, _ text: String) -> String { enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    public func bold(_ text: String) -> String { wrap("1", text) }
    public func dim(_ text: String) -> String { wrap("2", text) }
    public func highlight(_ text: String) -> String { wrap("32", text) }
    public func warning(_ text: String) -> String { wrap("33", text) }
    public func error(_ text: String) -> String { wrap("31", text) }
}

/// Whole lines to stdout from any thread, never interleaved.
public final class LineWriter: Sendable {
    public static let standardOutput = LineWriter()
    private let lock = NSLock()

    public init() {}

    public func write(_ line: String) {
        lock.withLock { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }

    /// Writes raw text (no newline added), e.g. a prompt or cursor movements.
    public func writeRaw(_ text: String) {
        lock.withLock { FileHandle.standardOutput.write(Data(text.utf8)) }
    }

    /// Runs `body` with the writer held, for multi-line redraws.
    public func exclusive(_ body: () -> Void) { lock.withLock(body) }
}
