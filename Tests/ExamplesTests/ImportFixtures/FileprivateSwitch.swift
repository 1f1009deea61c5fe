// A switch that is not module-wide: `fileprivate` (or `private`) switches
// this file only.
import SimulatedFoundation

fileprivate typealias UserDefaults = SimulatedFoundation.UserDefaults

func fileprivateSwitch() -> SimulatedFoundation.UserDefaults { UserDefaults.standard }
