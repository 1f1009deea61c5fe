/// One change to a device's network or clock, as `groupsim cloud network`
/// and a scenario's steps make it, with the bounds of each amount: the one
/// place they are defined (the cloud's fault table, a device's settings
/// file and the cloud's refusal of far-future stamps read them too).
package enum NetworkAction: Sendable, Equatable {
    case online, offline, partition, heal
    case latency(milliseconds: Int64)
    case dropPushes(Int64)
    case duplicatePushes(Int64)
    case skew(milliseconds: Int64)
    /// The device's agent uploads a store's writes at most once per this many ms (0: as soon as it sees them).
    case uploadInterval(milliseconds: Int64)

    /// Whether the cloud applies it (to the device's traffic), rather than the device (its network switch, its clock, its agent).
    package var isSetByTheCloud: Bool {
        switch self {
        case .online, .offline, .skew, .uploadInterval: false
        case .partition, .heal, .latency, .dropPushes, .duplicatePushes: true
        }
    }

    /// The delay the cloud adds to a device's traffic: at most ten minutes, so a delayed push still arrives within a run.
    package static let latencyRange: ClosedRange<Int64> = 0...600_000
    /// How many of a device's next pushes the cloud drops or sends twice.
    package static let pushCountRange: ClosedRange<Int64> = 0...1_000_000
    /// How far a device's clock may be off the real time, in milliseconds:
    /// ten years either way. A settings file with more is damaged, and a
    /// stamp made with it (now ± skew) stays far inside 64 bits.
    package static let skewRange: ClosedRange<Int64> = -10 * 365 * 86_400_000...10 * 365 * 86_400_000

    /// How long a device's agent may hold a store's writes between uploads: at most ten minutes. Apple says uploads
    /// are limited to "several per minute" (docs/apple-traps.md); a scenario uses seconds, so it never waits a real minute.
    package static let uploadIntervalRange: ClosedRange<Int64> = 0...600_000

    package static let words = "online, offline, latency MS, partition, heal, drop-pushes N, duplicate-pushes N, skew MS, upload-interval MS"

    package init(_ word: String, _ amount: Int64?) throws {
        switch (word, amount) {
        case ("online", nil):
            self = .online
            return
        case ("offline", nil):
            self = .offline
            return
        case ("partition", nil):
            self = .partition
            return
        case ("heal", nil):
            self = .heal
            return
        case ("online", let amount?), ("offline", let amount?), ("partition", let amount?), ("heal", let amount?):
            throw CloudFormatError("\(word) takes no number (found \(amount))")
        default: break
        }
        guard let (range, unit) = Self.accepted(by: word) else {
            throw CloudFormatError("'\(word)' is not a network change; use one of \(Self.words)")
        }
        let allowed = "from \(range.lowerBound) to \(range.upperBound) \(unit)"
        guard let amount else { throw CloudFormatError("\(word) needs a number: \(word) \(unit == "pushes" ? "N" : "MS"), \(allowed)") }
        guard range.contains(amount) else { throw CloudFormatError("\(word) takes a number \(allowed), found \(amount)") }
        switch word {
        case "latency": self = .latency(milliseconds: amount)
        case "drop-pushes": self = .dropPushes(amount)
        case "upload-interval": self = .uploadInterval(milliseconds: amount)
        case "duplicate-pushes": self = .duplicatePushes(amount)
        default: self = .skew(milliseconds: amount)
        }
    }

    /// The numbers a change that takes one accepts, and their unit; nil for any other word.
    static func accepted(by word: String) -> (range: ClosedRange<Int64>, unit: String)? {
        switch word {
        case "latency": return (latencyRange, "ms")
        case "drop-pushes", "duplicate-pushes": return (pushCountRange, "pushes")
        case "skew": return (skewRange, "ms (ten years either way)")
        case "upload-interval": return (uploadIntervalRange, "ms")
        default: return nil
        }
    }
}
