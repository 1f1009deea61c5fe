import Foundation
import GroupDefaults
import SimulationValues

/// What the simulation adds to Apple's API, kept out of Apple's types.
///
/// `UserDefaults`, `NSUbiquitousKeyValueStore`, `NSObject` and `UIApplication`
/// here have Apple's public members and no others, so the code of an app or
/// of a library that extends them (with its own `UserDefaults.Observation`,
/// `Key`, `observe(_:_:)` …) compiles against SimulatedFoundation as it does
/// against Foundation: a name the simulation declared in Apple's type would
/// make that extension's name ambiguous at every use, and no import in the
/// user's code could fix it. Everything of the simulation's own is here
/// instead, taking the instance it is about as an argument.
public enum GroupSim {
    // MARK: Instances of a given simulated process

    /// `UserDefaults()` of `process`: its standard domain, in a new instance.
    /// For a test that holds several simulated processes at once; an app
    /// uses `UserDefaults()`, which belongs to `SimulatedProcess.current`.
    /// - Parameter process: The simulated process.
    /// - Returns: A new instance.
    public static func defaults(of process: SimulatedProcess) -> UserDefaults {
        UserDefaults(groupDefaults: process.openStandard(), process: process)
    }

    /// `UserDefaults(suiteName:)` of `process`: nil for the names Apple
    /// refuses (`NSGlobalDomain`, the app's own bundle identifier) and for a
    /// suite whose file cannot be made (reported); a nil name is the standard domain.
    /// - Parameters:
    ///   - suiteName: The suite's domain name, or nil.
    ///   - process: The simulated process.
    /// - Returns: A new instance, or nil.
    public static func defaults(suiteName: String?, of process: SimulatedProcess) -> UserDefaults? {
        process.open(suiteNameOrStandard: suiteName).map { UserDefaults(groupDefaults: $0, process: process) }
    }

    /// A `UserDefaults` over defaults opened elsewhere (a `GroupDefaults` of a
    /// tool or test), belonging to `process`.
    /// - Parameters:
    ///   - groupDefaults: The defaults to wrap.
    ///   - process: The simulated process the instance belongs to.
    /// - Returns: A new instance.
    public static func defaults(over groupDefaults: GroupDefaults, of process: SimulatedProcess) -> UserDefaults {
        UserDefaults(groupDefaults: groupDefaults, process: process)
    }

    /// `NSUbiquitousKeyValueStore()` of `process`: the store its entitlement
    /// names in `environment` (`keyValueStoreVariable`). Without one it is
    /// reported, once per process and store, and the store stays on the
    /// device: never synced, `synchronize()` false. `report`: where that is
    /// said (`Diagnostics` by default).
    /// - Parameters:
    ///   - process: The simulated process.
    ///   - environment: The variables that say the store's identifier.
    ///   - report: Where a missing entitlement is said.
    /// - Returns: The store.
    public static func ubiquitousStore(
        of process: SimulatedProcess, environment: [String: String] = ProcessInfo.processInfo.environment,
        report: (Diagnostic) -> Void = Diagnostics.report
    ) -> NSUbiquitousKeyValueStore {
        NSUbiquitousKeyValueStore(process: process, environment: environment, report: report)
    }

    /// The variable naming a process's `com.apple.developer.ubiquity-kvstore-identifier`
    /// entitlement, which `groupsim exec` sets from the manifest's `icloud-kvs`.
    public static let keyValueStoreVariable = SimulationEnvironment.Name.keyValueStore

    /// `UIApplication.shared` of another simulated process; apps use `shared`.
    /// - Parameter process: The simulated process.
    /// - Returns: A new instance.
    public static func application(of process: SimulatedProcess) -> UIApplication {
        UIApplication(process: process)
    }

    // MARK: What is behind an instance

    /// The simulated defaults behind `defaults`: `import GroupDefaults` for
    /// its atomic `increment`, `transaction` and typed keys.
    /// - Parameter defaults: An instance of this library.
    /// - Returns: The defaults it wraps.
    public static func groupDefaults(of defaults: UserDefaults) -> GroupDefaults { defaults.groupDefaults }

    /// The simulated process `defaults` belongs to.
    /// - Parameter defaults: An instance of this library.
    /// - Returns: Its process.
    public static func process(of defaults: UserDefaults) -> SimulatedProcess { defaults.simulatedProcess }
}
