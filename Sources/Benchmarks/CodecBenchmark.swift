import ArgumentParser
import CloudModel
import Foundation
import PropertyList

/// The binary property-list codec on its own: every commit encodes the
/// whole domain and every process that sees it decodes it, so both are on
/// the propagation path twice. The same suite as `propagation` (N keys of
/// 27-character strings and a probe), against Foundation's
/// `PropertyListSerialization` in the same process.
struct CodecBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "Binary property-list encoding and decoding of a suite, against Foundation's PropertyListSerialization.")

    @Option(help: "Keys in the suite besides the probe.") var keys = 100
    @Option(help: "Rounds per operation; the median round is reported.") var rounds = 7
    @Option(help: "Calls per round.") var calls = 2_000
    @Option(
        help: ArgumentHelp("Measure only this operation (for callgrind: scripts/callgrind.sh).", valueName: "encode|decode|json-encode|json-decode"))
    var only: Operation?
    @Option(help: "With --only: the side measured.") var side: MeasuredSide = .groupsim

    enum Operation: String, ExpressibleByArgument, CaseIterable {
        case encode, decode
        case jsonEncode = "json-encode"
        case jsonDecode = "json-decode"
    }

    func validate() throws {
        try requireCount(keys, "--keys", in: 0...100_000)
        try requireCount(rounds, "--rounds", in: 1...1000)
        try requireCount(calls, "--calls", in: 1...10_000_000)
    }

    func run() throws {
        let suite = Self.suite(keys: keys)
        let bytes = BinaryPropertyList.encode(.dictionary(suite))
        // Each side decodes what it encoded, and both must read the other's: the comparison is of equals.
        let foundationBytes = try PropertyListSerialization.data(fromPropertyList: Self.foundationValue(suite), format: .binary, options: 0)
        guard try BinaryPropertyList.decode(foundationBytes) == .dictionary(suite),
            (try PropertyListSerialization.propertyList(from: bytes, format: nil) as? [String: Any])?.count == suite.count
        else { throw ValidationError("the two codecs disagree on the suite") }

        let push = SyncCodec.encode(Self.push(suite))
        guard try SyncCodec.decodeCloudMessage(push) == Self.push(suite),
            (try JSONSerialization.jsonObject(with: Data(push.utf8)) as? [String: Any])?.count == 6
        else { throw ValidationError("the push does not read back as itself") }

        if let only {
            let time = measure(only, side: side, suite: suite, bytes: side == .groupsim ? bytes : foundationBytes, push: push)
            print(
                "codec --only \(only.rawValue) --side \(side.rawValue): \(calls) calls, \(FoundationBenchmark.duration(time)) each (median of \(rounds))"
            )
            return
        }
        print(
            "codec: binary property list of a \(suite.count)-key suite (\(bytes.count) bytes), and a push of its \(suite.count) records"
                + " (\(push.utf8.count) bytes of JSON), one process, median of \(rounds) rounds")
        print("| operation | Foundation | groupsim | Foundation ÷ groupsim |")
        print("|---|---:|---:|---:|")
        for operation in Operation.allCases {
            let foundation = measure(operation, side: .foundation, suite: suite, bytes: foundationBytes, push: push)
            let simulated = measure(operation, side: .groupsim, suite: suite, bytes: bytes, push: push)
            print(
                "| \(operation.rawValue) | \(FoundationBenchmark.duration(foundation)) | \(FoundationBenchmark.duration(simulated)) | "
                    + String(format: "%.1f×", foundation / max(simulated, 1)) + " |")
        }
    }

    /// The propagation benchmark's suite: `key-N` → 27-character strings, and the probe.
    static func suite(keys: Int) -> [String: PlistValue] {
        var suite: [String: PlistValue] = ["probe": .integer(1)]
        for index in 0..<keys { suite["key-\(index)"] = .string("value-\(index)-" + String(repeating: "x", count: 16)) }
        return suite
    }

    /// The cloud's push of every key of `suite`, as one change each, in key order.
    static func push(_ suite: [String: PlistValue]) -> CloudMessage {
        let records = suite.keys.sorted().enumerated().map { index, key in
            CloudRecord(
                key: key, value: suite[key], stamp: ChangeStamp(time: 1_795_754_286_367, device: "D0", sequence: Int64(index + 1)), revision: 5377)
        }
        return .changes(store: "com.example.bench", base: 5376, revision: 5377, initial: false, records: records)
    }

    static func foundationValue(_ suite: [String: PlistValue]) -> [String: Any] {
        suite.mapValues { value -> Any in
            switch value {
            case .string(let string): string
            case .integer(let integer): Int(integer)
            default: preconditionFailure("the suite holds strings and one integer")
            }
        }
    }

    /// The median time of one call.
    private func measure(_ operation: Operation, side: MeasuredSide, suite: [String: PlistValue], bytes: Data, push: String) -> Double {
        let round: (Int) -> Int
        switch (operation, side) {
        case (.jsonEncode, .groupsim):
            let message = Self.push(suite)
            round = { calls in (0..<calls).reduce(0) { sum, _ in sum &+ SyncCodec.encode(message).utf8.count } }
        case (.jsonDecode, .groupsim):
            round = { calls in
                (0..<calls).reduce(0) { sum, _ in
                    guard case .changes(_, _, _, _, let records, _)? = try? SyncCodec.decodeCloudMessage(push) else { return sum }
                    return sum &+ records.count
                }
            }
        case (.jsonEncode, .foundation):
            // The same text read by Foundation, written again with sorted keys (as the protocol's text is).
            let object = (try? JSONSerialization.jsonObject(with: Data(push.utf8))) ?? [:]
            round = { calls in
                (0..<calls).reduce(0) { sum, _ in sum &+ ((try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys))?.count ?? 0) }
            }
        case (.jsonDecode, .foundation):
            let data = Data(push.utf8)
            round = { calls in
                (0..<calls).reduce(0) { sum, _ in sum &+ (((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?.count ?? 0) }
            }
        case (.encode, .groupsim):
            round = { calls in (0..<calls).reduce(0) { sum, _ in sum &+ BinaryPropertyList.encode(.dictionary(suite)).count } }
        case (.decode, .groupsim):
            round = { calls in (0..<calls).reduce(0) { sum, _ in sum &+ ((try? BinaryPropertyList.decode(bytes))?.dictionaryValue?.count ?? 0) } }
        case (.encode, .foundation):
            let value = Self.foundationValue(suite)
            round = { calls in
                (0..<calls).reduce(0) { sum, _ in
                    sum &+ ((try? PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0))?.count ?? 0)
                }
            }
        case (.decode, .foundation):
            round = { calls in
                (0..<calls).reduce(0) { sum, _ in
                    sum &+ (((try? PropertyListSerialization.propertyList(from: bytes, format: nil)) as? [String: Any])?.count ?? 0)
                }
            }
        }
        return FoundationBenchmark.median(rounds: rounds, calls: calls, round, settle: {})
    }
}
