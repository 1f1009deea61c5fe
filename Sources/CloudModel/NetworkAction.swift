/// One change to a device's network or clock, as `groupsim cloud network`
/// and a scenario's steps make it, with the bounds of each amount: the one
/// place they are defined (the cloud's fault table checks them too).
public enum NetworkAction: Sendable, Equatable {
    case online, offline, partition, heal
    case latency(milliseconds: Int64)
    case dropPushes(Int64)
    case duplicatePushes(Int64)
    case skew(milliseconds: Int64)

    /// The delay the cloud adds to a device's traffic: at most ten minutes, so a delayed push still arrives within a run.
    public static let latencyRange: ClosedRange<Int64> = 0...600_000
    /// How many of a device's next pushes the cloud drops or sends twice.
    public static let pushCountRange: ClosedRange<Int64> = 0...1_000_000
    /// How far a device's clock may be off the real time, in milliseconds: a
    /// year either way. Real clocks are off by seconds or hours; a year keeps
    /// every skewed stamp (now ± skew) far inside a 64-bit millisecond time.
    public static let skewRange: ClosedRange<Int64> = -365 * 86_400_000...365 * 86_400_000

    public static let words = "online, offline, latency MS, partition, heal, drop-pushes N, duplicate-pushes N, skew MS"

    /// The ranges as the CLI's and the cloud's errors state them.
    public static let rangesText = "latency \(latencyRange.lowerBound)–\(latencyRange.upperBound) ms, "
        + "counts \(pushCountRange.lowerBound)–\(pushCountRange.upperBound), skew within ±\(skewRange.upperBound) ms (a year)"

    public init(_ word: String, _ amount: Int64?) throws {
        switch (word, amount) {
        case ("online", nil): self = .online
        case ("offline", nil): self = .offline
        case ("partition", nil): self = .partition
        case ("heal", nil): self = .heal
        case ("latency", let ms?) where Self.latencyRange.contains(ms): self = .latency(milliseconds: ms)
        case ("drop-pushes", let n?) where Self.pushCountRange.contains(n): self = .dropPushes(n)
        case ("duplicate-pushes", let n?) where Self.pushCountRange.contains(n): self = .duplicatePushes(n)
        case ("skew", let ms?) where Self.skewRange.contains(ms): self = .skew(milliseconds: ms)
        default:
            throw CloudFormatError("'\(word)\(amount.map { " \($0)" } ?? "")' is not a network change; use one of \(Self.words) (\(Self.rangesText))")
        }
    }
}
