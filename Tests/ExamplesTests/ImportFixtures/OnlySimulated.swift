// `import SimulatedFoundation` in place of `import Foundation`: `UserDefaults`
// is the simulated one in types, in expressions and in extensions, and the
// rest of Foundation is still there.
import SimulatedFoundation

func standardDefaults() -> SimulatedFoundation.UserDefaults { UserDefaults.standard }
func passThrough(_ defaults: UserDefaults) -> SimulatedFoundation.UserDefaults { defaults }
func simulatedIsUserDefaults(_ defaults: SimulatedFoundation.UserDefaults) -> UserDefaults { defaults }

extension UserDefaults {
    static func cleared(named name: String) -> UserDefaults {
        let defaults = self.init(suiteName: name)!
        defaults.removePersistentDomain(forName: name)
        return defaults
    }
}

func otherFoundation() throws -> Data { try JSONEncoder().encode([Date()]) }
