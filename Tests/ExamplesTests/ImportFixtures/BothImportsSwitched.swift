// Both imports, in the switched module: no ambiguity.
import Foundation
import SimulatedFoundation

func bothImportsSwitched() {
    let defaults: UserDefaults = .standard
    requireSimulated(defaults)
}
