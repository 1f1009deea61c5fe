import Foundation

/// The process's `GROUPSIM_*` variables, read once: every name is declared
/// here (`Name`), and every read of one in a process goes through `current`,
/// taken from the environment the first time anything asks (in practice as
/// the process starts), so a variable a process removes from its environment
/// later (the control channel's, the signal mask's, the owner's pid, kept
/// from the process's own children) still reads as it was started with.
/// What each value means, and its checks, stay with the code that uses it.
package struct SimulationEnvironment: Sendable, Equatable {
    /// Every `GROUPSIM_*` name the package reads or sets.
    package enum Name {
        /// The simulation root (`SimulationRoot.resolve`).
        package static let root = "GROUPSIM_ROOT"
        /// The simulated device.
        package static let device = "GROUPSIM_DEVICE"
        /// The process's bundle identifier (`ProcessIdentity`).
        package static let bundleIdentifier = "GROUPSIM_BUNDLE_ID"
        /// The app groups it is entitled to, comma-separated.
        package static let appGroups = "GROUPSIM_APP_GROUPS"
        /// Its iCloud key-value store identifier entitlement.
        package static let keyValueStore = "GROUPSIM_KVS_IDENTIFIER"
        /// Its app's widget target's bundle id (`WidgetEnvironment`).
        package static let widgetBundle = "GROUPSIM_WIDGET_BUNDLE_ID"
        /// That widget's daily reload budget.
        package static let widgetReloadBudget = "GROUPSIM_WIDGET_RELOAD_BUDGET"
        /// `background` when the system launched the process.
        package static let launch = "GROUPSIM_LAUNCH"
        /// The bound on a timeline provider's answer, in seconds.
        package static let widgetProviderTimeout = "GROUPSIM_WIDGET_PROVIDER_TIMEOUT"
        /// An App Intent's time limit, in seconds (`AppIntentRun`).
        package static let intentTimeLimit = "GROUPSIM_INTENT_TIME_LIMIT"
        /// The control channel as an inherited descriptor (`ControlProtocol`).
        package static let controlDescriptor = "GROUPSIM_CONTROL_FD"
        /// The control channel as a Unix socket's path.
        package static let controlSocket = "GROUPSIM_CONTROL_SOCKET"
        /// `1`: unblock every signal as the program loads (`StartingSignalMask`).
        package static let unblockSignals = "GROUPSIM_UNBLOCK_SIGNALS"
        /// The starter's pid, whose end ends the process (`OwnerLifetime`).
        package static let ownerPID = "GROUPSIM_OWNER_PID"
        /// `0`: an app never starts the cloud (`CloudDaemons`).
        package static let cloudAutostart = "GROUPSIM_CLOUD_AUTOSTART"
        /// How long a writer waits for a file lock, in seconds (`LockWaitLimit`).
        package static let lockTimeout = "GROUPSIM_LOCK_TIMEOUT"
        /// `1`: commits wait for `synchronize` (tests of pending edits).
        package static let deferCommits = "GROUPSIM_DEFER_COMMITS"
        /// Set: the change watcher traces its events on standard error.
        package static let watchDebug = "GROUPSIM_WATCH_DEBUG"
        /// `1`: cloud events carry a clock reading (`EventClock`).
        package static let eventClock = "GROUPSIM_EVENT_CLOCK"
        /// The folder of the package's executables, for the runner and the testing library.
        package static let binDir = "GROUPSIM_BIN_DIR"
        /// The runner's executables' folder, as a `run` step's command is told it.
        package static let binaries = "GROUPSIM_BINARIES"
        /// `1`: GroupSimTesting keeps every simulation's root.
        package static let keepRoots = "GROUPSIM_KEEP_ROOTS"

        /// Every variable a starter of an executable sets itself: its identity and entitlement, its control channel, its
        /// signal mask, its tie to its starter, and (the runner and the testing library) that the cloud is theirs to
        /// start. A scenario's `env` may set none of them.
        package static let startersVariables = [
            root, device, bundleIdentifier, appGroups, keyValueStore, widgetBundle, widgetReloadBudget, launch, controlSocket,
            controlDescriptor, unblockSignals, ownerPID, cloudAutostart,
        ]
    }

    /// The device a process is on when nothing names one.
    package static let defaultDevice = "iPhone"

    /// The `GROUPSIM_*` entries of the environment it was made from.
    package let values: [String: String]

    /// The `GROUPSIM_*` entries of `environment` (a test's own, or the process's).
    package init(_ environment: [String: String]) {
        values = environment.filter { $0.key.hasPrefix("GROUPSIM_") }
    }

    /// The process's, read the first time it is asked for and never again.
    package static let current = SimulationEnvironment(ProcessInfo.processInfo.environment)

    /// The variable's value as given (an empty one included); nil when unset.
    package subscript(_ name: String) -> String? { values[name] }

    /// The variable's value; nil when unset or empty (what most readers mean by "not given").
    package func nonEmpty(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }
}
