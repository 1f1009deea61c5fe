import AppModel
import DeviceState
import Foundation

extension Simulation {
    /// Moves `device`'s simulated clock forward, as the scenario step
    /// `advance-clock` does: every process of the device sees the new time (a
    /// widget shows the entries that came due, its policy may ask again), and a
    /// widget reload deferred past the day's budget comes when the clock
    /// reaches the next day, and an iCloud upload held for the device's upload
    /// interval goes once the interval has passed on it.
    /// - Parameters:
    ///   - device: The device's name.
    ///   - duration: How far to move its clock (more than 0, at most 366 days).
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the duration is out of range or the device's clock cannot be moved.
    public func advanceClock(
        of device: String = "iPhone", by duration: Duration,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let seconds = duration.seconds
        try await changeDevice(
            "advance the clock of \(device) by \(seconds) s", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        ) {
            manager in
            try WidgetReloadBudget(root: manager.root, device: device).advanceClock(by: seconds)
        }
    }
}
