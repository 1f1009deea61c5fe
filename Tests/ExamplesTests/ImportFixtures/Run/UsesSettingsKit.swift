// An app whose own files are switched, over a dependency that is not.
import SettingsKit
import SimulatedFoundation

UserDefaults.standard.set("dark", forKey: "theme")
print("simulated=\(UserDefaults.standard.string(forKey: "theme") ?? "nil")")
print("kit=\(kitTheme() ?? "nil")")
