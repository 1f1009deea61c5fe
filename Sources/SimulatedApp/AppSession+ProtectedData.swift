import AppModel
import Foundation
import GroupDefaults

extension AppSession {
    /// Before the store is opened: an app that says `protected-data: wait-for-unlock`
    /// waits, if the device is locked before its first unlock, until it is
    /// unlocked, so what it reads is the user's data; any other reads at once.
    /// Returns whether protected data is available when the store opens.
    static func awaitProtectedData(_ use: AppManifest.ProtectedDataUse, root: SimulationRoot, device: String) throws -> Bool {
        let available = try ProtectedData.state(root: root, device: device).isAvailable
        if available || use == .trustReads { return available }
        // No bound: a prewarmed app waits as long as the device stays locked; a signal ends it.
        while !(try ProtectedData.waitUntilAvailable(root: root, device: device, timeout: 3600)) {}
        return true
    }
}
