import Foundation
import GroupDefaults
import Guarded
import SimulationValues

/// The simulated process `UserDefaults` instances belong to: who it is and
/// its volatile domains (launch arguments, registered defaults).
///
/// `current` is this process as the environment names it (`groupsim exec`
/// sets GROUPSIM_ROOT, GROUPSIM_DEVICE, GROUPSIM_BUNDLE_ID and
/// GROUPSIM_APP_GROUPS; see `ProcessIdentity`), with the argument domain read
/// from `CommandLine.arguments`, as Apple reads a process's arguments.
/// Unchecked Sendable: its properties are constants, set once from the environment; `ProcessDomains` locks its own state.
public final class SimulatedProcess: @unchecked Sendable {
    public let identity: ProcessIdentity
    let processDomains: ProcessDomains

    /// A process of its own with its own argument and registration domains,
    /// for a test that holds several identities at once; use it with
    /// `GroupSim.defaults(of:)` and `GroupSim.defaults(suiteName:of:)`.
    /// - Parameters:
    ///   - identity: The root, device, bundle identifier and app groups.
    ///   - launchArguments: Launch arguments for its argument domain (`-key value`).
    public init(identity: ProcessIdentity, launchArguments: [String] = []) {
        self.identity = identity
        processDomains = ProcessDomains()
        processDomains.setLaunchArguments(launchArguments)
    }

    /// This process: the volatile domains are the process's own (shared with
    /// any `GroupDefaults` it also uses).
    private init(environmentIdentity identity: ProcessIdentity, launchArguments: [String]) {
        self.identity = identity
        processDomains = .shared
        processDomains.setLaunchArguments(launchArguments)
    }

    private let warningsLock = Locked()
    private var warningsSaid: Set<String> = []

    /// True the first time it is asked about `warning` in this process: a
    /// warning about the process itself (a missing entitlement) is said once,
    /// not once per instance.
    func isFirstTime(warning: String) -> Bool {
        warningsLock.withLock { warningsSaid.insert(warning).inserted }
    }

    private static let lock = Locked()
    nonisolated(unsafe) private static var chosen: SimulatedProcess?

    /// This process, named by the environment; read once, at first use.
    /// That first use also checks whether the executable uses Foundation's
    /// own UserDefaults (outside the lock: the warning's handler may use defaults).
    public static var current: SimulatedProcess {
        let (process, isFirstUse) = lock.withLock { () -> (SimulatedProcess, Bool) in
            if let chosen { return (chosen, false) }
            let process = SimulatedProcess(
                environmentIdentity: .fromEnvironment(SimulationEnvironment.current.values), launchArguments: Array(CommandLine.arguments.dropFirst())
            )
            chosen = process
            return (process, true)
        }
        if isFirstUse { FoundationDefaultsCheck.warnIfThisExecutableUsesFoundationDefaults(environment: SimulationEnvironment.current.values) }
        return process
    }

    /// Makes `process` the current one, for a test harness that cannot set
    /// the environment before the process starts (prefer GROUPSIM_* or
    /// `groupsim exec`). The standard defaults are reset, so the next
    /// `UserDefaults.standard` is `process`'s.
    /// - Parameter process: The process this one stands for from now on.
    public static func use(_ process: SimulatedProcess) {
        lock.withLock { chosen = process }
        UserDefaults.resetStandardUserDefaults()
    }

    // MARK: Opening defaults

    /// The standard defaults. Opening them fails only when their folder cannot
    /// be made (an unwritable root): then, loudly, they live in a temporary
    /// root of their own for this run, as close as it gets to working defaults.
    func openStandard() -> GroupDefaults {
        do {
            return try GroupDefaults(context: identity.context, processDomains: processDomains)
        } catch {
            let temporary = NSTemporaryDirectory() + "groupsim-unsaved-\(getpid())"
            Diagnostics.report(
                Diagnostic(
                    kind: .commitFailed,
                    message: "the standard defaults of \(identity.bundleIdentifier) cannot be opened in '\(identity.root.path)' (\(error)); "
                        + "for this run they are kept in '\(temporary)' instead, where no other process looks. Set GROUPSIM_ROOT to a folder you can write."
                ))
            var fallback = identity
            fallback.root = SimulationRoot(path: temporary)
            do {
                return try GroupDefaults(context: fallback.context, processDomains: processDomains)
            } catch let second {
                // Nothing is left to hold a value: neither the root nor the temporary folder can hold a file.
                fatalError("groupsim: no folder can hold the standard defaults: '\(identity.root.path)' (\(error)), '\(temporary)' (\(second))")
            }
        }
    }

    /// `UserDefaults(suiteName:)`'s defaults: the standard ones for a nil name.
    func open(suiteNameOrStandard suiteName: String?) -> GroupDefaults? {
        guard let suiteName else { return openStandard() }
        return open(suiteName: suiteName)
    }

    /// `UserDefaults(suiteName:)`: nil (reported) for the names Apple refuses
    /// and for a suite whose file cannot be made.
    func open(suiteName: String) -> GroupDefaults? {
        do {
            return try GroupDefaults(suiteName: suiteName, context: identity.context, processDomains: processDomains)
        } catch {
            Diagnostics.report(Diagnostic(kind: .callRefused, message: "UserDefaults(suiteName: \(DefaultsError.show(suiteName))) is nil: \(error)"))
            return nil
        }
    }
}
