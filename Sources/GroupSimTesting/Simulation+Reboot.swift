import AppModel
import GroupDefaults

extension Simulation {
    /// Reboots `device`, as the scenario step `reboot` does: until
    /// `unlockDevice`, programs launched on it read their preferences as
    /// absent and keep that view until relaunched (docs/apple-traps.md).
    /// `dataProtectionOff`: the containers have no protection (nothing is hidden).
    public func rebootDevice(
        _ device: String, dataProtectionOff: Bool = false,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        try await Blocking.run { [self] in
            do {
                try DeviceManager(root: simulationRoot).reboot(
                    device, protection: dataProtectionOff ? ProtectedData.Protection.none : .untilFirstUnlock)
            } catch { throw outcome.failure("cannot reboot \(device): \(error)", at: place) }
        }
    }

    /// The person's first unlock of `device` after `rebootDevice` (the scenario step `unlock`).
    public func unlockDevice(
        _ device: String,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        try await Blocking.run { [self] in
            do { try DeviceManager(root: simulationRoot).unlock(device) } catch {
                throw outcome.failure("cannot unlock \(device): \(error)", at: place)
            }
        }
    }
}
