import AppInstall
import AppModel
import GroupDefaults

extension Simulation {
    /// Reboots `device`, as the scenario step `reboot` does: the programs
    /// running on it end (SIGTERM: each saves what it wrote), and until
    /// `unlockDevice`, programs launched on it read their preferences as
    /// absent and keep that view until relaunched (docs/apple-traps.md).
    /// `dataProtectionOff`: the containers have no protection (nothing is hidden).
    /// - Parameters:
    ///   - device: The device's name.
    ///   - dataProtectionOff: Whether the device reboots with data protection off (preferences readable before the first unlock).
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when a program on it does not end within 20 s, or the device cannot be rebooted.
    public func rebootDevice(
        _ device: String, dataProtectionOff: Bool = false,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        for program in programsRunning(on: device) { try await program.endForReboot(of: device, at: place) }
        try await changeDevice("reboot \(device)", at: place) {
            try $0.reboot(device, protection: dataProtectionOff ? ProtectedData.Protection.none : .untilFirstUnlock)
        }
    }

    /// The person's first unlock of `device` after `rebootDevice` (the scenario step `unlock`).
    /// - Parameters:
    ///   - device: The device's name.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the device cannot be unlocked.
    public func unlockDevice(
        _ device: String,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await changeDevice("unlock \(device)", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)) {
            try $0.unlock(device)
        }
    }

    /// Runs `change` on the simulation's devices off the caller's thread; its error is the test's failure at `place`.
    func changeDevice(_ what: String, at place: SourcePlace, _ change: @escaping @Sendable (DeviceManager) throws -> Void) async throws {
        try await Blocking.run { [self] in
            do { try change(DeviceManager(root: simulationRoot)) } catch { throw outcome.failure("cannot \(what): \(error)", at: place) }
        }
    }
}
