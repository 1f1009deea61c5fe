// Foundation's class written out: always Foundation's, in any module.
import SimulatedFoundation

func requireFoundation(_ defaults: Foundation.UserDefaults) {}

func explicitFoundation() {
    requireFoundation(Foundation.UserDefaults.standard)
}
