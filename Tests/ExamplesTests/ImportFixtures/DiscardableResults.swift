// Called for their effect, as Apple code does: no "result unused" warning.
import SimulatedFoundation

func synchronizeBoth() {
    UserDefaults.standard.synchronize()
    NSUbiquitousKeyValueStore.default.synchronize()
}
