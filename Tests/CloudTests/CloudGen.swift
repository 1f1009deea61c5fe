import CloudModel
import Foundation
import PropertyBased
import PropertyList

/// Random stamps, changes and values for the cloud's property tests. Times
/// and devices come from small pools so that ties (same millisecond, same
/// device) happen often: the order's later fields are what they exercise.
enum CloudGen {
    /// Device names that sort differently by UTF-8 bytes than by other orders
    /// (case, a prefix, Latin-1, beyond the BMP), none canonically equivalent to another.
    static let devices = ["iPhone", "iPhone 2", "iPad", "Mac", "Z", "a", "é", "\u{FF61}", "😀", ""]
    static let times: [Int64] = [.min, -1, 0, 1, 2, 1_700_000_000_000, .max]

    static func stamp(using rng: inout any SeededRandomNumberGenerator) -> ChangeStamp {
        let device = Bool.random(using: &rng) ? devices.randomElement(using: &rng)! : text(using: &rng)
        let sequence: Int64 = Bool.random(using: &rng) ? Int64.random(in: 0...3, using: &rng) : Int64.random(in: .min ... .max, using: &rng)
        return ChangeStamp(time: times.randomElement(using: &rng)!, device: device, sequence: sequence)
    }

    /// Any Int64, most often one at an edge: the ends, around 0, and around
    /// the largest counter a file may hold.
    static func edgeNumber(using rng: inout any SeededRandomNumberGenerator) -> Int64 {
        let edges: [Int64] = [
            .min, .min + 1, -1, 0, 1, 2, CloudLimits.maximumCounter - 1, CloudLimits.maximumCounter,
            CloudLimits.maximumCounter + 1, .max - 1, .max,
        ]
        return Bool.random(using: &rng) ? edges.randomElement(using: &rng)! : Int64.random(in: .min ... .max, using: &rng)
    }

    static var edgeNumbers: Generator<[Int64], [[Int64]]> {
        Generator(run: { rng in (0..<3).map { _ in edgeNumber(using: &rng) } }, shrink: { _ in [] })
    }

    static var stamps: Generator<[ChangeStamp], [[ChangeStamp]]> {
        Generator(run: { rng in (0..<3).map { _ in stamp(using: &rng) } }, shrink: { _ in [] })
    }

    /// Random text: ASCII or any scalar, up to 8 of them.
    static func text(using rng: inout any SeededRandomNumberGenerator) -> String {
        let scalars = (0..<Int.random(in: 0...8, using: &rng)).compactMap { _ in
            Unicode.Scalar(UInt32.random(in: Bool.random(using: &rng) ? 0x20...0x7E : 0...0x10FFFF, using: &rng))
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Values that JSON carries exactly: no NaN or infinity, dates in whole
    /// milliseconds, no dictionary that looks like `{"$date": …}` or `{"$data": …}`.
    static func value(depth: Int, using rng: inout any SeededRandomNumberGenerator) -> PlistValue {
        switch Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &rng) {
        case 0: return .string(text(using: &rng))
        case 1:
            return .integer(
                Bool.random(using: &rng) ? [.min, .max, 0, -1].randomElement(using: &rng)! : Int64.random(in: .min ... .max, using: &rng))
        case 2:
            let real = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng))
            return .real(real.isFinite ? real : -0.0)
        case 3: return .bool(Bool.random(using: &rng))
        case 4: return .date(millisecondDate(Int64.random(in: -100_000_000_000_000...100_000_000_000_000, using: &rng)))
        case 5: return .data(Data((0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        case 6: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth: depth - 1, using: &rng) })
        default:
            var entries: [String: PlistValue] = [:]
            for _ in 0..<Int.random(in: 0...3, using: &rng) { entries["k" + text(using: &rng)] = value(depth: depth - 1, using: &rng) }
            return .dictionary(entries)
        }
    }

    /// A date exactly as the wire's text gives it back: milliseconds since 2001.
    static func millisecondDate(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(milliseconds) / 1000)
    }

    static func optionalValue(using rng: inout any SeededRandomNumberGenerator) -> PlistValue? {
        Int.random(in: 0..<4, using: &rng) == 0 ? nil : value(depth: 2, using: &rng)
    }

    static func record(using rng: inout any SeededRandomNumberGenerator) -> CloudRecord {
        CloudRecord(
            key: text(using: &rng), value: optionalValue(using: &rng), stamp: stamp(using: &rng),
            revision: Int64.random(in: 0 ... .max, using: &rng))
    }

    static func revisions(using rng: inout any SeededRandomNumberGenerator) -> [String: Int64] {
        var stores: [String: Int64] = [:]
        for _ in 0..<Int.random(in: 0...3, using: &rng) { stores[text(using: &rng)] = Int64.random(in: 0 ... .max, using: &rng) }
        return stores
    }

    static var agentMessage: Generator<AgentMessage, [AgentMessage]> {
        Generator(
            run: { rng in
                switch Int.random(in: 0..<5, using: &rng) {
                case 4:
                    return .restore(
                        store: text(using: &rng),
                        records: (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                            UploadedChange(key: text(using: &rng), value: optionalValue(using: &rng), stamp: stamp(using: &rng))
                        })
                case 0: return .hello(device: text(using: &rng), account: text(using: &rng), stores: revisions(using: &rng))
                case 1: return .subscribe(store: text(using: &rng), since: Int64.random(in: 0 ... .max, using: &rng))
                case 2:
                    return .upload(
                        store: text(using: &rng),
                        changes: (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                            UploadedChange(key: text(using: &rng), value: optionalValue(using: &rng), stamp: stamp(using: &rng))
                        })
                default: return .poll(stores: revisions(using: &rng))
                }
            }, shrink: { _ in [] })
    }

    static var cloudMessage: Generator<CloudMessage, [CloudMessage]> {
        Generator(
            run: { rng in
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: return .welcome(server: text(using: &rng))
                case 4:
                    return .restored(
                        store: text(using: &rng), kept: (0..<Int.random(in: 0...3, using: &rng)).map { _ in text(using: &rng) },
                        refused: [], superseded: (0..<Int.random(in: 0...2, using: &rng)).map { _ in record(using: &rng) },
                        advanced: Bool.random(using: &rng) ? Advance(base: 1, revision: 2, generation: text(using: &rng)) : nil)
                case 1:
                    return .changes(
                        store: text(using: &rng), base: Int64.random(in: 0 ... .max, using: &rng),
                        revision: Int64.random(in: 0 ... .max, using: &rng), initial: Bool.random(using: &rng),
                        records: (0..<Int.random(in: 0...4, using: &rng)).map { _ in record(using: &rng) },
                        lineage: Bool.random(using: &rng)
                            ? nil
                            : StoreLineage(
                                generations: (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                                    StoreLineage.Generation(id: text(using: &rng), through: Int64.random(in: 0 ... .max, using: &rng))
                                }, forgotten: Int64.random(in: 0 ... .max, using: &rng)))
                case 2:
                    return .ack(
                        store: text(using: &rng),
                        accepted: (0..<Int.random(in: 0...4, using: &rng)).map { _ in Int64.random(in: .min ... .max, using: &rng) },
                        refused: (0..<Int.random(in: 0...2, using: &rng)).map { _ in
                            RefusedChange(key: text(using: &rng), sequence: Int64.random(in: .min ... .max, using: &rng), reason: text(using: &rng))
                        },
                        superseded: (0..<Int.random(in: 0...2, using: &rng)).map { _ in record(using: &rng) },
                        advanced: Bool.random(using: &rng)
                            ? Advance(base: Int64.random(in: 0...1000, using: &rng), revision: Int64.random(in: 0...1000, using: &rng)) : nil)
                default: return .error(text(using: &rng))
                }
            }, shrink: { _ in [] })
    }

    /// Changes of a few keys by a few devices, with sequence numbers unique
    /// per device (a stamp is a change's id), in two orders.
    struct History: CustomStringConvertible {
        var changes: [UploadedChange]
        var reordered: [UploadedChange]
        var description: String {
            changes.map { "\($0.key)=\($0.value.map { PlistJSON.encode($0) } ?? "removed") by \($0.stamp)" }.joined(separator: ", ")
        }
    }

    static var history: Generator<History, [History]> {
        Generator(
            run: { rng in
                var nextSequence: [String: Int64] = [:]
                let changes = (0..<Int.random(in: 1...8, using: &rng)).map { index -> UploadedChange in
                    let device = ["iPhone", "iPad", "é", "Z"].randomElement(using: &rng)!
                    let sequence = nextSequence[device, default: 1]
                    nextSequence[device] = sequence + 1
                    // Three times only, so most keys see writes in the same millisecond.
                    let stamp = ChangeStamp(time: Int64.random(in: 0...2, using: &rng), device: device, sequence: sequence)
                    let value: PlistValue? = Int.random(in: 0..<4, using: &rng) == 0 ? nil : .integer(Int64(index))
                    return UploadedChange(key: ["a", "b", "c"].randomElement(using: &rng)!, value: value, stamp: stamp)
                }
                return History(changes: changes, reordered: changes.shuffled(using: &rng))
            }, shrink: { _ in [] })
    }

    /// Per key, the change with the greatest stamp: what last-writer-wins must end with.
    static func winners(_ changes: [UploadedChange]) -> [String: UploadedChange] {
        var winners: [String: UploadedChange] = [:]
        for change in changes where winners[change.key].map({ $0.stamp < change.stamp }) ?? true { winners[change.key] = change }
        return winners
    }
}
