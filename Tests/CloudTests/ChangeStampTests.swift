import CloudModel
import Foundation
import PropertyBased
import PropertyList
import TestSupport
import Testing

@testable import CloudDevice
@testable import CloudService

/// The order of writes of one key: time, then the device's name as UTF-8
/// bytes, then the sequence. Total, so every device and the cloud pick the
/// same winner whatever order the changes arrive in.
@Suite struct ChangeStampTests {
    /// The order as specified, written out independently of `ChangeStamp.<`.
    static func precedes(_ a: ChangeStamp, _ b: ChangeStamp) -> Bool {
        if a.time != b.time { return a.time < b.time }
        let (x, y) = (Array(a.device.utf8), Array(b.device.utf8))
        if x != y { return x.lexicographicallyPrecedes(y) }
        return a.sequence < b.sequence
    }

    /// A stranger's text in a log line is cut at a whole scalar, with its full length said.
    @Test func aLogFieldIsCutAtAWholeScalarWithItsLength() {
        #expect(CloudFormatError.cut("short", bytes: 5) == "short")
        #expect(CloudFormatError.cut("abcdef", bytes: 5) == "abcde… (6 bytes)")
        // é is two bytes: the cut never splits one.
        #expect(CloudFormatError.cut(String(repeating: "é", count: 10), bytes: 5) == "éé… (20 bytes)")
        #expect(CloudFormatError.cut(String(repeating: "x", count: 60_000), bytes: 400).utf8.count < 420)
    }

    @Test func timeDecidesFirst() {
        #expect(ChangeStamp(time: 1, device: "z", sequence: 99) < ChangeStamp(time: 2, device: "a", sequence: 1))
        #expect(ChangeStamp(time: -5, device: "a", sequence: 1) < ChangeStamp(time: 0, device: "a", sequence: 1))
        #expect(ChangeStamp(time: .min, device: "a", sequence: .max) < ChangeStamp(time: .max, device: "a", sequence: .min))
    }

    @Test func thenTheDeviceThenTheSequence() {
        #expect(ChangeStamp(time: 7, device: "a", sequence: 99) < ChangeStamp(time: 7, device: "b", sequence: 1))
        #expect(ChangeStamp(time: 7, device: "a", sequence: 1) < ChangeStamp(time: 7, device: "a", sequence: 2))
        #expect(!(ChangeStamp(time: 7, device: "a", sequence: 2) < ChangeStamp(time: 7, device: "a", sequence: 2)))
    }

    @Test func devicesCompareAsUTF8Bytes() {
        func earlier(_ a: String, _ b: String) -> Bool {
            ChangeStamp(time: 0, device: a, sequence: 1) < ChangeStamp(time: 0, device: b, sequence: 1)
        }
        #expect(earlier("Z", "a"))  // 0x5A < 0x61: upper case first, not a case-insensitive order
        #expect(earlier("iPhone", "iPhone 2"))  // a prefix first
        #expect(earlier("", "a"))
        #expect(earlier("z", "é"))  // 0x7A < 0xC3
        // U+FF61 is EF BD A1 and U+1F600 is F0 9F 98 80 in UTF-8, but in UTF-16
        // (NSString's order) U+1F600 starts with D83D and would come first.
        #expect(earlier("\u{FF61}", "😀"))
        #expect(!earlier("😀", "\u{FF61}"))
    }

    /// Two names that are canonically equivalent but differ in bytes name two
    /// devices (two folders, two agents); Swift's `String ==` calls them equal.
    @Test func canonicallyEquivalentDeviceNamesAreTwoDevices() {
        let composed = ChangeStamp(time: 5, device: "Caf\u{E9}", sequence: 1)  // ... C3 A9
        let decomposed = ChangeStamp(time: 5, device: "Cafe\u{301}", sequence: 1)  // ... 65 CC 81
        let between = ChangeStamp(time: 5, device: "Caff", sequence: 1)  // ... 66 66
        #expect(Array(composed.device.utf8) != Array(decomposed.device.utf8))
        do {
            #expect(composed != decomposed)
            #expect(decomposed < composed)
            // Without it the order is not even a strict weak order: decomposed < between < composed, yet decomposed == composed.
            #expect(!(decomposed < between && between < composed && decomposed == composed))
        }
    }

    @Test func theOrderIsTotalAntisymmetricAndTransitive() async {
        await propertyCheck(count: 500, input: CloudGen.stamps) { stamps in
            let (a, b, c) = (stamps[0], stamps[1], stamps[2])
            // Exactly one of a < b, a == b, b < a.
            #expect([a < b, a == b, b < a].filter { $0 }.count == 1, "\(a) vs \(b)")
            #expect((a < b) == Self.precedes(a, b), "\(a) < \(b)")
            #expect((a == b) == (!Self.precedes(a, b) && !Self.precedes(b, a)), "\(a) == \(b)")
            if a < b && b < c { #expect(a < c, "\(a) < \(b) < \(c)") }
            #expect(a == a && !(a < a))
            #expect(a <= b || b <= a)
        }
    }

    // MARK: Any order, the same state

    /// Every change uploaded one by one, in two orders, to two ledgers: the
    /// same records (value and stamp per key), the greatest stamp's.
    @Test func theLedgerEndsTheSameWhateverTheOrder() async throws {
        await propertyCheck(count: 40, input: CloudGen.history) { history throws in
            let root = TemporaryRoot()
            var first = CloudLedger(dataFolder: root.path + "/first")
            var second = CloudLedger(dataFolder: root.path + "/second")
            for change in history.changes { _ = try first.upload([change], to: "store", of: "account", from: change.stamp.device) }
            for change in history.reordered { _ = try second.upload([change], to: "store", of: "account", from: change.stamp.device) }
            let expected = CloudGen.winners(history.changes).mapValues { "\($0.stamp) \($0.value.map { PlistJSON.encode($0) } ?? "removed")" }
            for ledger in [first, second] {
                var ledger = ledger
                let records = try ledger.store("store", of: "account").records
                #expect(records.mapValues { "\($0.stamp) \($0.value.map { PlistJSON.encode($0) } ?? "removed")" } == expected, "\(history)")
            }
        }
    }

    /// What the cloud sends a device (one record per key, the winner),
    /// applied in any order and any batches over the device's own pending
    /// writes: the same values and pending writes; per key the newer of the
    /// record and the local write.
    @Test func aCopyEndsTheSameWhateverTheOrderOfTheCloudsRecords() async {
        await propertyCheck(count: 300, input: CloudGen.history) { history in
            // This device ("Mac", which wrote none of the records) wrote every key once, before any record arrived.
            var base = StoreCopy()
            base.switchAccount(to: "account")
            for (index, key) in ["a", "b", "c"].enumerated() {
                base.write(.string("local \(key)"), forKey: key, device: "Mac", time: Int64(index))
            }
            let records = CloudGen.winners(history.changes).values.enumerated().map { index, change in
                CloudRecord(key: change.key, value: change.value, stamp: change.stamp, revision: Int64(index + 1))
            }
            var inOrder = base
            for record in records.sorted(by: { $0.revision < $1.revision }) { inOrder.apply([record], revision: record.revision, initial: false) }
            var allAtOnce = base
            allAtOnce.apply(records.reversed(), revision: Int64(records.count), initial: false)
            #expect(inOrder.values == allAtOnce.values, "\(history)")
            #expect(inOrder.pending == allAtOnce.pending, "\(history)")
            for record in records {
                let local = base.pending[record.key]!
                if record.stamp < local.stamp {
                    #expect(inOrder.values[record.key] == local.value && inOrder.pending[record.key] == local, "\(history)")
                } else {
                    #expect(inOrder.values[record.key] == record.value && inOrder.pending[record.key] == nil, "\(history)")
                }
            }
        }
    }

    /// Two records of one key, the newer applied first: the copy must keep
    /// showing the newer one (the order promises the same state either way).
    @Test func anOlderRecordAppliedAfterANewerOneDoesNotWin() {
        let newer = CloudRecord(key: "k", value: .string("newer"), stamp: ChangeStamp(time: 2, device: "iPhone", sequence: 1), revision: 2)
        let older = CloudRecord(key: "k", value: .string("older"), stamp: ChangeStamp(time: 1, device: "Mac", sequence: 1), revision: 1)
        var oldestFirst = StoreCopy()
        oldestFirst.apply([older], revision: 1, initial: false)
        oldestFirst.apply([newer], revision: 2, initial: false)
        #expect(oldestFirst.values["k"] == .string("newer"))
        var newestFirst = StoreCopy()
        newestFirst.apply([newer], revision: 2, initial: false)
        do {
            newestFirst.apply([older], revision: 1, initial: false)
            #expect(newestFirst.values["k"] == .string("newer"))
            var corrected = StoreCopy()
            corrected.apply([newer], revision: 2, initial: false)
            corrected.correct([older])
            #expect(corrected.values["k"] == .string("newer"))
        }
    }
}
