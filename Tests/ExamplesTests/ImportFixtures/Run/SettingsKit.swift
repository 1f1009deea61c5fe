// A dependency that imports Foundation and knows nothing of the simulation:
// its `UserDefaults` is Foundation's, silently, whatever the app's module
// declares. Compiled as a module of its own.
import Foundation

public func kitTheme() -> String? {
    UserDefaults.standard.string(forKey: "theme")
}
