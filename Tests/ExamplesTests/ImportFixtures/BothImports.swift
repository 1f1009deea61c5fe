// Both imports in one file: two `UserDefaults` are visible, and Swift says so
// ("'UserDefaults' is ambiguous") instead of picking Foundation's.
import Foundation
import SimulatedFoundation

func bothImports() -> UserDefaults { .standard }
