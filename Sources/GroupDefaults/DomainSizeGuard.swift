import Foundation

/// What a domain's growth does on the device's platform, checked after
/// each commit this process makes (never on a read): CFPreferences's log at
/// 4 MiB on iOS and macOS; on tvOS the size-limit warning at 512 KiB and
/// the process's end at 1 MiB; on watchOS the log and the end at 1 MiB.
/// Each log and warning is said once per domain and process.
struct DomainSizeGuard: Sendable {
    let limits: DomainSizeLimits
    let platform: DevicePlatform

    init(platform: DevicePlatform) {
        self.platform = platform
        limits = platform.sizeLimits
    }

    /// Says what the size does, and returns whether it is at or over the
    /// platform's warning size (tvOS's 512 KiB; never on other platforms).
    func check(size: Int, domain: String, path: String) -> Bool {
        if let log = limits.log, size >= log {
            Diagnostics.reportOnce(
                Diagnostic(
                    kind: .sizeLimitLogged,
                    message:
                        "Attempting to store >= \(log) bytes of data in CFPreferences/NSUserDefaults on this platform is invalid (domain \(domain) is \(size) bytes at '\(path)'; \(platform.rawValue))",
                    path: path),
                key: "size-limit-log \(path)")
        }
        if let warning = limits.warning, size >= warning {
            Diagnostics.reportOnce(
                Diagnostic(
                    kind: .sizeLimitExceeded,
                    message:
                        "NSUserDefaultsSizeLimitExceededNotification: domain \(domain) is \(size) bytes, \(size == warning ? "at" : "over") \(platform.rawValue)'s warning size of \(warning) bytes; the app is terminated at \(limits.termination ?? 0) bytes",
                    path: path),
                key: "size-limit-warning \(path)")
        }
        if let termination = limits.termination, size >= termination {
            // watchOS says it in its own words before the crash (RevenueCat purchases-ios #5912).
            let said = platform == .watchOS ? "NSUserDefaults/CFPreferences byte count limit reached for \(domain); " : ""
            let reason =
                said
                + "domain \(domain) reached \(size) bytes at '\(path)', \(platform.rawValue)'s limit for an app's defaults is \(termination) bytes"
            Diagnostics.report(Diagnostic(kind: .sizeLimitTerminated, message: "terminating: " + reason, path: path))
            UncaughtException.end(saying: "*** Terminating app: the system ended it because \(reason)")
        }
        return limits.warning.map { size >= $0 } ?? false
    }

    /// Whether the platform warns before it ends the process (only then is there a warning to tell listeners of).
    var warns: Bool { limits.warning != nil }
}
