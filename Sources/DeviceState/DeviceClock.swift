import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import SimulationValues

/// A device's simulated clock: the real time plus an offset kept in the
/// device's folder, so every process of the device reads the same time.
/// It moves only when advanced (`advance-clock`, `groupsim device clock`):
/// nothing polls it, and a device whose clock was never advanced reads the
/// real time, so nothing changes for a run that never advances it. What
/// counts time on it: widgets' budgets and entries, and the sync agent's
/// upload interval (an advance lets a held upload go without a real wait).
package struct DeviceClock: Sendable {
    package let root: SimulationRoot
    package let device: String

    /// The longest single advance (`SimulatedDuration.longestAdvance`).
    package static let longestAdvance = SimulatedDuration.longestAdvance

    package init(root: SimulationRoot, device: String) {
        self.root = root
        self.device = device
    }

    var folder: String { get throws { try root.devicePath(device) + "/Library/Clock" } }
    package var path: String { get throws { try folder + "/clock.plist" } }

    /// How far a clock may get ahead of the real time: a century. Further, a
    /// day number no longer fits an integer; a file saying so is damaged.
    package static let farthestAhead: Double = 100 * 366 * 86_400

    /// How far the device's clock is ahead of the real time, in seconds (0 if never advanced).
    package func offset() throws -> Double {
        let file = try path
        return try Self.offset(in: try SharedPlistFile.read(path: file, root: root.path) ?? [:], path: file)
    }

    /// The offset a clock file holds, checked: a hand-edited or damaged file
    /// must give a clear error, never a time no day number can hold.
    package static func offset(in contents: [String: PlistValue], path: String) throws -> Double {
        let seconds: Double
        switch contents["offset"] {
        case nil: return 0
        case .real(let value)?: seconds = value
        case .integer(let value)?: seconds = Double(value)
        case let other?: throw DeviceError("\(path): offset is \(other), expected a number of seconds")
        }
        guard seconds.isFinite, (0...farthestAhead).contains(seconds) else {
            throw DeviceError(
                "\(path): offset \(seconds) s is no clock's (from 0 to 100 years ahead); remove the file to set the device's clock back to the real time"
            )
        }
        return seconds
    }

    /// The device's time now.
    package func now() throws -> Date { Date().addingTimeInterval(try offset()) }

    /// Moves the clock forward atomically (two advancers never lose one); returns the new time.
    @discardableResult
    package func advance(by seconds: Double) throws -> Date {
        guard seconds > 0, seconds <= Self.longestAdvance else {
            throw DeviceError("a clock advances by more than 0 and at most 366 days, found \(seconds) s")
        }
        try root.prepareConfinedDirectory(try folder)
        let file = try path
        var offset: Double = 0
        try SharedPlistFile(path: file, durable: try root.durability().waitsForTheDisk, root: root.path).update { contents in
            offset = try Self.offset(in: contents, path: file) + seconds
            guard offset <= Self.farthestAhead else {
                throw DeviceError("\(file): the clock would be more than 100 years ahead; remove the file to set it back to the real time")
            }
            contents["offset"] = .real(offset)
        }
        return Date().addingTimeInterval(offset)
    }

    /// The simulated day a time falls in (days since 1970, UTC): budgets refill when it changes.
    package static func day(of date: Date) -> Int { Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// A day (as `day(of:)` counts them) as people read it: "2026-11-28", or "day N" past year 9999.
    package static func dayText(_ day: Int) -> String {
        let (year, month, dayOfMonth) = CivilCalendar.date(fromDays: Int64(day))
        guard (1...9999).contains(year) else { return "day \(day)" }
        return String(format: "%04lld-%02lld-%02lld", year, month, dayOfMonth)
    }
}
