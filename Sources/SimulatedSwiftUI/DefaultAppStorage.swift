import Guarded
import SimulatedFoundation

extension GroupSim {
    /// What SwiftUI's `.defaultAppStorage(_:)` does for a view hierarchy, for
    /// the whole process: every `@AppStorage` declared without `store:` reads
    /// and writes `store` from now on, whenever it was made (SwiftUI, too,
    /// finds the store in the environment at each use, not at the property's
    /// creation). nil goes back to `UserDefaults.standard`, SwiftUI's default.
    ///
    /// A `View` modifier on Apple platforms; here there are no views, so it
    /// is the simulation's own call, in `GroupSim`, where no app's own
    /// extension can meet it. Call it where the app applied the modifier (its
    /// `App`'s `body`, before any settings are read).
    /// - Parameter store: The store; nil goes back to `UserDefaults.standard`.
    public static func defaultAppStorage(_ store: UserDefaults?) {
        DefaultAppStorage.shared.set(store)
    }
}

/// The process's store for `@AppStorage` properties declared without one.
/// Unchecked Sendable: the store is reached only through its lock (UserDefaults is itself thread-safe).
final class DefaultAppStorage: @unchecked Sendable {
    static let shared = DefaultAppStorage()

    private let store = Locked<UserDefaults?>(nil)

    func set(_ store: UserDefaults?) {
        self.store.withLock { $0 = store }
    }

    /// The store set last, else `UserDefaults.standard` as it is at this
    /// moment (after `resetStandardUserDefaults()`, the new one).
    var current: UserDefaults {
        store.withLock { $0 } ?? .standard
    }
}
