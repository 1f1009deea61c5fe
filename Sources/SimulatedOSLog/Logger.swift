import Foundation
import Guarded

/// Apple's unified logging, as apps write it (`import os`), on Linux:
/// `Logger` and the older `os_log`, with the same calls and message
/// interpolation (privacy, number and alignment options). Each message is
/// one line on standard error, whole, at once: the scenario runner shows a
/// program's stderr in its report and timeline, and `wait: { for: output }`
/// can wait on it. Values are shown whatever their privacy, as Xcode's debug
/// console shows them (Console on a device shows `<private>` instead).
///
/// ```swift
/// #if canImport(os)
/// import os
/// #else
/// import SimulatedOSLog
/// #endif
/// ```
public struct Logger: @unchecked Sendable {  // two strings, never changed
    let subsystem: String
    let category: String

    /// A logger whose lines name `subsystem` and `category`, as Console filters by them.
    /// - Parameters:
    ///   - subsystem: Usually the app's bundle identifier.
    ///   - category: The part of the app that logs.
    public init(subsystem: String, category: String) {
        self.subsystem = subsystem
        self.category = category
    }

    /// A logger with no subsystem or category (Apple's default log).
    public init() { self.init(subsystem: "", category: "") }

    /// A logger writing to `log` (made with `OSLog(subsystem:category:)`).
    /// - Parameter log: The log object.
    public init(_ log: OSLog) { self.init(subsystem: log.subsystem, category: log.category) }

    /// Logs at the default level (`notice`'s).
    /// - Parameter message: The interpolated message.
    public func log(_ message: OSLogMessage) { log(level: .default, message) }
    /// Logs at `level`.
    /// - Parameters:
    ///   - level: The message's type.
    ///   - message: The interpolated message.
    public func log(level: OSLogType, _ message: OSLogMessage) { OSLogOutput.write(line(level: level, message.rendered)) }
    /// Logs at the debug level, as Apple's `trace` does.
    /// - Parameter message: The interpolated message.
    public func trace(_ message: OSLogMessage) { log(level: .debug, message) }
    /// Logs at the debug level.
    /// - Parameter message: The interpolated message.
    public func debug(_ message: OSLogMessage) { log(level: .debug, message) }
    /// Logs at the info level.
    /// - Parameter message: The interpolated message.
    public func info(_ message: OSLogMessage) { log(level: .info, message) }
    /// Logs at the default level.
    /// - Parameter message: The interpolated message.
    public func notice(_ message: OSLogMessage) { log(level: .default, message) }
    /// Logs at the error level, as Apple's `warning` does.
    /// - Parameter message: The interpolated message.
    public func warning(_ message: OSLogMessage) { log(level: .error, message) }
    /// Logs at the error level.
    /// - Parameter message: The interpolated message.
    public func error(_ message: OSLogMessage) { log(level: .error, message) }
    /// Logs at the fault level, as Apple's `critical` does.
    /// - Parameter message: The interpolated message.
    public func critical(_ message: OSLogMessage) { log(level: .fault, message) }
    /// Logs at the fault level.
    /// - Parameter message: The interpolated message.
    public func fault(_ message: OSLogMessage) { log(level: .fault, message) }

    /// The line a message is written as: its level as `log stream` names it, where it comes from, the text.
    package func line(level: OSLogType, _ text: String) -> String {
        let source = subsystem.isEmpty && category.isEmpty ? "" : "[\(subsystem):\(category)] "
        return "\(level.name): \(source)\(text)"
    }
}

/// A log's kind of message (`OSLogType`), with Apple's raw values.
public struct OSLogType: RawRepresentable, Equatable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// A type by its raw value.
    /// - Parameter rawValue: Apple's raw value.
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let `default` = OSLogType(0x00)
    public static let info = OSLogType(0x01)
    public static let debug = OSLogType(0x02)
    public static let error = OSLogType(0x10)
    public static let fault = OSLogType(0x11)

    var name: String {
        switch self {
        case .info: "Info"
        case .debug: "Debug"
        case .error: "Error"
        case .fault: "Fault"
        default: "Default"
        }
    }
}

/// A log object of the older API (`os_log(_:log:type:_:)`, `Logger(_:)`).
public final class OSLog: @unchecked Sendable {  // two strings, never changed
    let subsystem: String
    let category: String

    /// A log object for `os_log(_:log:type:_:)` and `Logger(_:)`.
    /// - Parameters:
    ///   - subsystem: Usually the app's bundle identifier.
    ///   - category: The part of the app that logs.
    public init(subsystem: String, category: String) {
        self.subsystem = subsystem
        self.category = category
    }

    public static let `default` = OSLog(subsystem: "", category: "")
    /// Apple's log that discards everything.
    public static let disabled = OSLog(subsystem: "", category: "disabled")
}

/// `os_log` with a printf-style message: `%{public}@`, `%{private}d` … take
/// their value whatever the privacy, as `Logger` does.
/// - Parameters:
///   - message: The format, with printf's conversions and os_log's `{public}`/`{private}` annotations.
///   - log: The log object; `.disabled` writes nothing.
///   - type: The message's type.
///   - arguments: The values for the format's conversions.
public func os_log(_ message: StaticString, log: OSLog = .default, type: OSLogType = .default, _ arguments: any CVarArg...) {
    guard log !== OSLog.disabled else { return }
    let format = OSLogOutput.withoutPrivacy("\(message)")
    let text = arguments.isEmpty ? format : String(format: format, arguments: arguments)
    OSLogOutput.write(Logger(log).line(level: type, text))
}

/// Where messages go: one line on standard error, written whole by one call.
package enum OSLogOutput {
    private static let lock = Locked()

    package static func write(_ line: String) {
        lock.withLock { FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// A printf format without its privacy annotations (`%{public}@` → `%@`).
    package static func withoutPrivacy(_ format: String) -> String {
        format.replacingOccurrences(of: #"%\{[^}]*\}"#, with: "%", options: .regularExpression)
    }
}
