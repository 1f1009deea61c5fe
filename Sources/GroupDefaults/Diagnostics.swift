import Foundation
import Guarded
import SharedFiles

/// Things the library must say loudly but that are not errors of one call:
/// a missing app-group entitlement, a corrupt file moved aside, a commit
/// that failed in the background. Printed to stderr unless a process routes
/// them elsewhere (the simulated apps turn them into protocol events).
public struct Diagnostic: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case missingEntitlement = "missing-entitlement"
        case corruptFileMovedAside = "corrupt-file-moved-aside"
        case commitFailed = "commit-failed"
        case reloadFailed = "reload-failed"
        case watcherOverflow = "watcher-overflow"
        case encodingFailed = "encoding-failed"
        case valueRefused = "value-refused"
        /// A launch argument's value looked like a property list but did not parse.
        case launchArgumentKeptAsString = "launch-argument"
        /// A GROUPSIM_* variable naming the process could not be used; a default took its place.
        case invalidEnvironment = "invalid-environment"
        /// A call refused as Apple refuses it (or raises for it): nothing changed.
        case callRefused = "call-refused"
        /// The executable also uses Foundation's own UserDefaults, which the simulation never sees.
        case foundationUserDefaults = "foundation-user-defaults"
        /// A key-value observer of a key path that Apple's KVO never delivers for a key of that name (a dot, a leading '@').
        case keyPathNeverObserved = "kvo-key-path"
        /// CFPreferences's log that a domain of this size is invalid (iOS, macOS: 4 MiB).
        case sizeLimitLogged = "size-limit-log"
        /// tvOS's `sizeLimitExceededNotification`: the domain reached 512 KiB.
        case sizeLimitExceeded = "size-limit-exceeded"
        /// The system ends the process for its domain's size (tvOS: 1 MiB).
        case sizeLimitTerminated = "size-limit-terminated"
        /// A program's control channel said `ready` without knowing its setup was done (SimulatedFoundation's `ProgramSetUp`).
        case setUpUnknown = "set-up-unknown"
        /// A background app's widget reload past the day's budget waits for the next day (SimulatedWidgetKit's WidgetCenter).
        case widgetReloadDeferred = "widget-reload-deferred"
        /// WidgetCenter's files could not be read or written: a reload request or a registration is lost.
        case widgetCenter = "widget-center"
        /// A timeline provider misbehaved: it did not answer in time, or answered twice (SimulatedWidgetKit's host).
        case widgetProvider = "widget-provider"
    }

    public let kind: Kind
    public let message: String
    public let path: String?

    /// - Parameters:
    ///   - kind: What kind of problem it is.
    ///   - message: What happened and what to do.
    ///   - path: The file it concerns, if any.
    public init(kind: Kind, message: String, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
    }

    public var description: String { message }

    /// A write found a corrupt file and moved it aside instead of overwriting it.
    static func movedAside(_ update: SharedPlistFile.Update, path: String, domain: String) -> Diagnostic? {
        guard let movedTo = update.corruptFileMovedTo else { return nil }
        return Diagnostic(
            kind: .corruptFileMovedAside,
            message:
                "'\(path)' was corrupt (\(update.corruptionReason ?? "unreadable")); moved to '\(movedTo)' for inspection, domain \(domain) starts empty",
            path: movedTo)
    }
}

public enum Diagnostics {
    private static let lock = Locked()
    nonisolated(unsafe) private static var handler: @Sendable (Diagnostic) -> Void = { diagnostic in
        FileHandle.standardError.write(Data("groupsim: warning: \(diagnostic.message)\n".utf8))
    }

    /// Replaces where diagnostics go (stderr by default) and returns the handler it replaced.
    /// - Parameter newHandler: Receives every diagnostic from now on.
    /// - Returns: The handler it replaced.
    @discardableResult
    public static func setHandler(_ newHandler: @escaping @Sendable (Diagnostic) -> Void) -> @Sendable (Diagnostic) -> Void {
        lock.withLock {
            defer { handler = newHandler }
            return handler
        }
    }

    /// Hands a diagnostic to the current handler.
    /// - Parameter diagnostic: What to report.
    public static func report(_ diagnostic: Diagnostic) {
        let current = lock.withLock { handler }
        current(diagnostic)
    }

    nonisolated(unsafe) private static var said: Set<String> = []

    /// Reports `diagnostic` the first time this process asks with `key`: a
    /// warning about the process itself (a missing entitlement) is said once,
    /// not at every open.
    static func reportOnce(_ diagnostic: Diagnostic, key: String) {
        guard lock.withLock({ said.insert(key).inserted }) else { return }
        report(diagnostic)
    }
}
