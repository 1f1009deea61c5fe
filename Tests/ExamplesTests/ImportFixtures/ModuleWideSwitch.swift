// The whole module at once: a module's own declaration comes before every
// import, so with this one line every file of the module means the
// simulated `UserDefaults`, whatever it imports.
import SimulatedFoundation

typealias UserDefaults = SimulatedFoundation.UserDefaults

func requireSimulated(_ defaults: SimulatedFoundation.UserDefaults) {}
