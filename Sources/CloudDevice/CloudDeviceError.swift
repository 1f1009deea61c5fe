import Foundation
import GroupDefaults

/// What fails on a device's side of the iCloud key-value store: a daemon
/// that is already running or did not start, with its lock holder or log; a
/// key the store refuses. `description` is the one place these become text.
package enum CloudDeviceError: Error, CustomStringConvertible {
    /// A cloud already serves `root`; `holder`: the process holding its lock.
    case cloudAlreadyServes(root: String, holder: String)
    /// An agent already syncs `device`; `holder`: the process holding its lock.
    case agentAlreadySyncs(device: String, holder: String)
    /// A daemon exited before it held its lock; `logTail`: its log's last lines ("" if none).
    case didNotStart(what: String, logTail: String)
    /// A daemon that did not hold its lock within `seconds`; `log`: where its output is.
    case notStartedInTime(what: String, pid: Int32, seconds: Int, log: String)
    /// A key longer than the store takes. Apple's store raises
    /// NSInvalidArgumentException with this reason, which ends an app that
    /// does not catch it (no Swift code can): see `raise()`.
    case keyTooLong(key: String)

    package static let exceptionName = "NSInvalidArgumentException"

    package var description: String {
        switch self {
        case .cloudAlreadyServes(let root, let holder):
            "a cloud already serves \(root) (\(holder)); `groupsim cloud status` shows it, `groupsim cloud stop` ends it"
        case .agentAlreadySyncs(let device, let holder): "an agent already syncs \(device) (\(holder)); `groupsim cloud stop` ends it"
        case .didNotStart(let what, let logTail): "\(what) did not start: \(logTail.isEmpty ? "it exited" : logTail)"
        case .notStartedInTime(let what, let pid, let seconds, let log): "\(what) (pid \(pid)) did not start within \(seconds) s; see \(log)"
        case .keyTooLong(let key): "NSUbiquitousKeyValueStore: key '\(key)' is too long."
        }
    }

    /// Whether Apple's store raises this as an exception, which ends the app.
    package var isUncaughtException: Bool {
        if case .keyTooLong = self { true } else { false }
    }

    /// What a driver is told (an `error` event) before the process ends.
    package var uncaughtMessage: String { "uncaught \(Self.exceptionName): \(description)" }

    /// Ends the process as the uncaught exception ends an app: the system's line on stderr, then SIGABRT.
    package func raise() -> Never { UncaughtException.terminate(name: Self.exceptionName, reason: description) }
}
