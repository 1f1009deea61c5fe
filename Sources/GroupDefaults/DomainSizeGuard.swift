import Foundation

/// What a domain's growth does on the device's platform, checked for each
/// commit this process makes (never on a read): CFPreferences's log at
/// 4 MiB on iOS and macOS; on tvOS the size-limit warning at 512 KiB, and at
/// 1 MiB the write refused and the process ended; on watchOS the log, the
/// refusal and the end at 1 MiB.
/// Each log and warning is said once per domain and process.
struct DomainSizeGuard: Sendable {
    let limits: DomainSizeLimits
    let platform: DevicePlatform

    init(platform: DevicePlatform) {
        self.platform = platform
        limits = platform.sizeLimits
    }

    /// After a commit: says what the size does, and returns whether it is
    /// at or over the platform's warning size (tvOS's 512 KiB; never on other platforms).
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
        return limits.warning.map { size >= $0 } ?? false
    }

    /// A write that would take the domain to `size` bytes, at or over the
    /// termination size, was refused before it reached the file (cfprefsd's
    /// error reply; the client then aborts in `handlePossibleOversizedMessage`,
    /// microsoft/appcenter-sdk-apple #2483): says what the platform logs, and ends the process.
    func refuse(size: Int, domain: String, path: String) -> Never {
        _ = check(size: size, domain: domain, path: path)
        // watchOS says it in its own words before the crash (RevenueCat purchases-ios #5912).
        let said = platform == .watchOS ? "NSUserDefaults/CFPreferences byte count limit reached for \(domain); " : ""
        let reason =
            said
            + "a write would take domain \(domain) to \(size) bytes at '\(path)' and was refused (the file keeps what it held); "
            + "\(platform.rawValue)'s limit for an app's defaults is \(limits.termination ?? size) bytes"
        Diagnostics.report(Diagnostic(kind: .sizeLimitTerminated, message: "terminating: " + reason, path: path))
        UncaughtException.end(saying: "*** Terminating app: the system ended it because \(reason)")
    }

    /// Whether the platform warns before it ends the process (only then is there a warning to tell listeners of).
    var warns: Bool { limits.warning != nil }
}
