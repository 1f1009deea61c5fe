import SimulatedFoundation  // was: import Foundation — the only change this file needs

// A theme picked by the user, kept in UserDefaults: injectable defaults, a
// suite shared by the app and its extensions, launch-argument overrides and
// test instances cleared before use.

enum Theme: String {
    case light
    case dark
    case black
}

class ThemeController {
    private(set) lazy var currentTheme = loadTheme()
    private let defaults: UserDefaults
    private let defaultsKey = "theme"

    init(defaults: UserDefaults = .standard) {
        self.defaults = defaults
    }

    func changeTheme(to theme: Theme) {
        currentTheme = theme
        defaults.setValue(theme.rawValue, forKey: defaultsKey)
    }

    private func loadTheme() -> Theme {
        let rawValue = defaults.string(forKey: defaultsKey)
        return rawValue.flatMap(Theme.init) ?? .light
    }
}

extension UserDefaults {
    /// The app group's suite: what every target of the app reads and writes.
    static var groupSuite: UserDefaults {
        return UserDefaults(suiteName: appGroupIdentifier)!
    }

    /// The standard defaults with the group's suite added below them: a value
    /// in the app's own domain overrides the shared one.
    static var combined: UserDefaults {
        let combined = UserDefaults.standard
        combined.addSuite(named: appGroupIdentifier)
        return combined
    }
}

extension UserDefaults {
    /// A suite named after the calling test and file, emptied first, so a
    /// test never sees what an earlier run stored. `#file` holds a '/',
    /// which a suite name may.
    static func makeClearedInstance(
        for functionName: StaticString = #function,
        inFile fileName: StaticString = #file
    ) -> UserDefaults {
        let className = "\(fileName)".split(separator: ".")[0]
        let testName = "\(functionName)".split(separator: "(")[0]
        let suiteName = "com.example.test.\(className).\(testName)"

        let defaults = self.init(suiteName: suiteName)!
        defaults.removePersistentDomain(forName: suiteName)
        return defaults
    }
}
