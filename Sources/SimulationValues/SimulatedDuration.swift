import Foundation

/// A span of simulated time as people write it (`6h`, `90m`, `30s`, `1d`): an
/// `advance-clock` step's `by`, `groupsim device clock --advance`.
package enum SimulatedDuration {
    /// The longest single advance of a device's clock: a year, far beyond any budget's period.
    package static let longestAdvance: Double = 366 * 86_400

    /// "6h", "90m", "30s", "2d" (or a bare number of seconds) in seconds; nil if it is none of those.
    package static func parse(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let last = trimmed.last else { return nil }
        let (number, unit) = units[last].map { (String(trimmed.dropLast()), $0) } ?? (trimmed, 1)
        guard let value = Double(number), value.isFinite else { return nil }
        return value * unit
    }

    /// The error for a duration that is not one, naming what was given and what is meant.
    package static func error(_ text: String, what: String) -> String {
        "\(what) is a duration such as 6h, 90m, 30s or 1d (more than 0, at most 366d), found '\(text)'"
    }
}
