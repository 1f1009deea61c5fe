import CloudDevice
import CloudModel
import Foundation
import PropertyList
import TestSupport
import Testing

@testable import CloudService

/// The cloud's durable state on real files: per key the greatest stamp
/// wins, a change is acknowledged only once it is on disk, repeats and late
/// changes are harmless, limits refuse.
@Suite struct CloudLedgerTests {
    let root = TemporaryRoot()
    var folder: String { root.path + "/cloud/data" }

    static func change(_ key: String, _ value: PlistValue?, time: Int64, device: String = "iPhone", sequence: Int64 = 1) -> UploadedChange {
        UploadedChange(key: key, value: value, stamp: ChangeStamp(time: time, device: device, sequence: sequence))
    }

    /// Reading an account that holds nothing (a typo in `cloud read
    /// --account`, a curl) makes no account: only an upload does.
    @Test func lookingUpAnAccountMakesNoAccount() throws {
        var ledger = CloudLedger(dataFolder: folder)
        #expect(try ledger.stores(of: "bob").isEmpty)
        #expect(try ledger.store("com.example.notes", of: "bob").records.isEmpty)
        #expect(!ledger.knownAccounts.contains("bob"))
        _ = try ledger.upload([Self.change("k", 1, time: 10)], to: "com.example.notes", of: "bob", from: "iPhone")
        #expect(ledger.knownAccounts.contains("bob"))
    }

    /// A revision no history reaches (the next upload would count past
    /// Int64.max) makes a store's file damaged: kept aside, named with the
    /// number, and the store starts again from revision 1, in the old
    /// account-file layout and in a store's own file alike.
    @Test func aStoreWithAnImpossibleRevisionIsSetAsideAndStartsAgain() throws {
        try FileManager.default.createDirectory(atPath: folder + "/accounts/bob", withIntermediateDirectories: true)
        let store: PlistValue = ["revision": .integer(.max), "records": [:]]
        try Data(BinaryPropertyList.encode(["s": store])).write(to: URL(fileURLWithPath: folder + "/accounts/alice.plist"))
        try Data(BinaryPropertyList.encode(store)).write(to: URL(fileURLWithPath: folder + "/accounts/bob/s.plist"))
        let reports = Reports()
        var ledger = CloudLedger(dataFolder: folder, report: reports.record)
        for account in ["alice", "bob"] {
            let outcome = try ledger.upload([Self.change("k", 1, time: 10)], to: "s", of: account, from: "iPhone")
            #expect(outcome.push?.revision == 1, "\(account)")
        }
        let damaged = reports.lines.filter { $0.hasPrefix("damaged") }
        #expect(
            damaged.count == 2 && damaged.allSatisfy { $0.contains("must be a revision (from 0 to 9007199254740992), found 9223372036854775807") },
            "\(reports.lines)")
    }

    @Test func anUploadIsOnDiskBeforeUploadReturns() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let outcome = try ledger.upload(
            [Self.change("k", ["nested": [1]], time: 10), Self.change("gone", nil, time: 10, sequence: 2)],
            to: "com.example.notes", of: "alice@example.com", from: "iPhone")
        #expect(outcome.accepted == [1, 2] && outcome.refused.isEmpty && outcome.superseded.isEmpty)
        #expect(outcome.push?.base == 0 && outcome.push?.revision == 1 && outcome.push?.records.map(\.key) == ["gone", "k"])
        #expect(FileManager.default.fileExists(atPath: folder + "/accounts/alice@example.com/com.example.notes.plist"))
        // A new ledger on the same folder (a restarted cloud) reads it back.
        var reopened = CloudLedger(dataFolder: folder)
        let state = try reopened.store("com.example.notes", of: "alice@example.com")
        #expect(state.revision == 1)
        #expect(
            state.records["k"]
                == CloudRecord(key: "k", value: ["nested": [1]], stamp: ChangeStamp(time: 10, device: "iPhone", sequence: 1), revision: 1))
        #expect(state.records["gone"]?.value == nil && state.records["gone"]?.revision == 1)
        #expect(state.values == ["k": ["nested": [1]]])
        #expect(reopened.knownAccounts == ["alice@example.com"])
        #expect(try reopened.store("other", of: "alice@example.com") == CloudStoreState())
    }

    /// A store read from its file writes back the records it read: each is
    /// what the record writes (a record with another field, or under another
    /// key than its own, is written as the record writes it), and a reopened
    /// cloud's next upload changes only the uploaded key's.
    @Test func aStoreWritesBackTheRecordsItRead() throws {
        var ledger = CloudLedger(dataFolder: folder)
        _ = try ledger.upload(
            (0..<10).map { Self.change("k\($0)", .string("v\($0)"), time: 10, sequence: Int64($0 + 1)) } + [
                Self.change("gone", nil, time: 11, sequence: 11)
            ],
            to: "s", of: "alice", from: "iPhone")
        var reader = CloudLedger(dataFolder: folder)
        var fields = try reader.store("s", of: "alice").plist
        var records = try #require(fields["records"]?.dictionaryValue)
        records["k1"] = .dictionary((records["k1"]?.dictionaryValue ?? [:]).merging(["extra": .bool(true)]) { $1 })
        records["renamed"] = records.removeValue(forKey: "k2")
        fields["records"] = .dictionary(records)
        let state = try CloudStoreState(fields, path: "s.plist")
        let written = try #require(state.plist["records"]?.dictionaryValue)
        #expect(written == state.records.mapValues { $0.plist })
        #expect(written["k1"]?.dictionaryValue?["extra"] == nil && written["k2"] != nil && written["renamed"] == nil)
        #expect(try CloudStoreState(state.plist, path: "s.plist") == state)
        // An upload after a restart: the file holds every record as the records write them.
        var reopened = CloudLedger(dataFolder: folder)
        _ = try reopened.upload([Self.change("k3", .string("new"), time: 20, sequence: 12)], to: "s", of: "alice", from: "iPhone")
        let after = try reopened.store("s", of: "alice")
        #expect(after.plist["records"]?.dictionaryValue == after.records.mapValues { $0.plist })
        var restarted = CloudLedger(dataFolder: folder)
        #expect(try restarted.store("s", of: "alice") == after)
    }

    @Test func theSameChangeAgainChangesNothing() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let change = Self.change("k", 1, time: 10)
        _ = try ledger.upload([change], to: "s", of: "alice", from: "iPhone")
        let again = try ledger.upload([change], to: "s", of: "alice", from: "iPhone")
        #expect(again.accepted == [1] && again.refused.isEmpty && again.superseded.isEmpty && again.push == nil)
        #expect(try ledger.store("s", of: "alice").revision == 1)
        var reopened = CloudLedger(dataFolder: folder)
        #expect(try reopened.store("s", of: "alice").revision == 1)
    }

    @Test func anOlderChangeIsAcceptedAndTheWinnerReturned() throws {
        var ledger = CloudLedger(dataFolder: folder)
        _ = try ledger.upload([Self.change("k", "newer", time: 200)], to: "s", of: "alice", from: "iPhone")
        let late = try ledger.upload([Self.change("k", "older", time: 100, device: "iPad", sequence: 7)], to: "s", of: "alice", from: "iPad")
        let winner = CloudRecord(key: "k", value: "newer", stamp: ChangeStamp(time: 200, device: "iPhone", sequence: 1), revision: 1)
        #expect(late.accepted == [7] && late.superseded == [winner] && late.push == nil)
        #expect(try ledger.store("s", of: "alice").records["k"] == winner)
        // The same millisecond: the device's name decides ("iPad" < "iPhone"), so iPad's write loses too.
        let tie = try ledger.upload([Self.change("k", "tie", time: 200, device: "iPad", sequence: 8)], to: "s", of: "alice", from: "iPad")
        #expect(tie.superseded == [winner])
    }

    @Test func aRemovalIsKeptSoALateWriteCannotBringTheKeyBack() throws {
        var ledger = CloudLedger(dataFolder: folder)
        _ = try ledger.upload([Self.change("k", 1, time: 10), Self.change("j", 2, time: 10, sequence: 2)], to: "s", of: "alice", from: "iPhone")
        let removal = try ledger.upload([Self.change("k", nil, time: 30, sequence: 3)], to: "s", of: "alice", from: "iPhone")
        #expect(
            removal.push?.records == [CloudRecord(key: "k", value: nil, stamp: ChangeStamp(time: 30, device: "iPhone", sequence: 3), revision: 2)])
        let late = try ledger.upload([Self.change("k", "late", time: 20, device: "iPad")], to: "s", of: "alice", from: "iPad")
        #expect(late.superseded.map(\.value) == [nil])
        let state = try ledger.store("s", of: "alice")
        #expect(state.values == ["j": 2])
        // A device that has revision 1 gets the removal; one that has nothing gets both keys.
        #expect(
            state.changes(since: 1) == [CloudRecord(key: "k", value: nil, stamp: ChangeStamp(time: 30, device: "iPhone", sequence: 3), revision: 2)])
        #expect(state.changes(since: 0).map(\.key) == ["j", "k"])
        #expect(state.changes(since: 2).isEmpty)
    }

    @Test func aChangeStampedByAnotherDeviceIsRefused() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let outcome = try ledger.upload(
            [Self.change("k", 1, time: 10, device: "iPad", sequence: 4), Self.change("j", 2, time: 10)],
            to: "s", of: "alice", from: "iPhone")
        #expect(outcome.refused == [RefusedChange(key: "k", sequence: 4, reason: "the change is stamped by device iPad, not iPhone")])
        #expect(outcome.accepted == [1])
        #expect(try ledger.store("s", of: "alice").values == ["j": 2])
    }

    /// A device named with a decomposed "é" is not the device named with a
    /// composed one: it may not upload the other's changes, and when both
    /// write in the same millisecond with the same sequence, one of them lost
    /// and must be told (else it shows its value for ever).
    @Test func canonicallyEquivalentDeviceNamesAreTwoDevices() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        _ = try ledger.upload([Self.change("k", "composed", time: 10, device: composed)], to: "s", of: "alice", from: composed)
        let second = try ledger.upload([Self.change("k", "decomposed", time: 10, device: decomposed)], to: "s", of: "alice", from: decomposed)
        do {
            // Decomposed sorts first by bytes (0x65 < 0xC3): its write lost.
            #expect(second.superseded.map(\.value) == ["composed"])
            let forged = try ledger.upload([Self.change("j", 1, time: 10, device: composed, sequence: 2)], to: "s", of: "alice", from: decomposed)
            #expect(forged.refused.count == 1)
        }
    }

    @Test func theKey1025IsRefused() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let full = (1...1024).map { Self.change("key\($0)", .integer(Int64($0)), time: 10, sequence: Int64($0)) }
        let first = try ledger.upload(full, to: "s", of: "alice", from: "iPhone")
        #expect(first.accepted.count == 1024 && first.refused.isEmpty)
        let over = try ledger.upload([Self.change("key1025", 1025, time: 11, sequence: 1025)], to: "s", of: "alice", from: "iPhone")
        #expect(over.refused == [RefusedChange(key: "key1025", sequence: 1025, reason: "the store would hold 1025 keys; it may hold at most 1024")])
        #expect(over.accepted.isEmpty && over.push == nil)
        // A key written again is not a new key; a removal makes room.
        let rewrite = try ledger.upload([Self.change("key1", "again", time: 12, sequence: 1026)], to: "s", of: "alice", from: "iPhone")
        #expect(rewrite.refused.isEmpty)
        let room = try ledger.upload(
            [Self.change("key2", nil, time: 13, sequence: 1027), Self.change("key1025", 1025, time: 13, sequence: 1028)],
            to: "s", of: "alice", from: "iPhone")
        #expect(room.refused.isEmpty && room.accepted == [1027, 1028])
        var reopened = CloudLedger(dataFolder: folder)
        #expect(try reopened.store("s", of: "alice").values.count == 1024)
    }

    @Test func aValueOverTheLimitIsRefusedAndNothingElseChanges() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let big = CloudLimitsTests.value(ofSize: CloudLimits.maximumValueBytes + 1)
        let outcome = try ledger.upload(
            [Self.change("big", big, time: 10), Self.change("small", 1, time: 10, sequence: 2)],
            to: "s", of: "alice", from: "iPhone")
        #expect(outcome.refused.map(\.key) == ["big"] && outcome.refused.first?.reason.contains("a value may have at most") == true)
        #expect(outcome.accepted == [2])
        #expect(try ledger.store("s", of: "alice").values == ["small": 1])
    }

    @Test func accountsAreSeparateFiles() throws {
        var ledger = CloudLedger(dataFolder: folder)
        _ = try ledger.upload([Self.change("k", 1, time: 10)], to: "s", of: "alice", from: "iPhone")
        _ = try ledger.upload([Self.change("k", 2, time: 10)], to: "s", of: "bob", from: "iPhone")
        var reopened = CloudLedger(dataFolder: folder)
        #expect(try reopened.store("s", of: "alice").values == ["k": 1])
        #expect(try reopened.store("s", of: "bob").values == ["k": 2])
        #expect(reopened.knownAccounts == ["alice", "bob"])
        #expect(throws: (any Error).self) { try reopened.upload([Self.change("k", 1, time: 10)], to: "s", of: "../escape", from: "iPhone") }
    }

    /// A store file the cloud cannot use at start is moved aside (never
    /// deleted), the log says which file and why, and the store starts
    /// empty with a history of its own, so devices see a reset and fill it.
    @Test func aDamagedStoreFileIsSetAsideNamedAndTheStoreStartsOver() throws {
        do {
            var ledger = CloudLedger(dataFolder: folder)
            _ = try ledger.upload([Self.change("k", 1, time: 10)], to: "s", of: "alice", from: "iPhone")
        }
        let path = folder + "/accounts/alice/s.plist"
        let reports = Reports()
        func outcome(_ bytes: Data) throws -> (CloudStoreState, [String]) {
            try bytes.write(to: URL(fileURLWithPath: path))
            var ledger = CloudLedger(dataFolder: folder, report: reports.record)
            let state = try ledger.store("s", of: "alice")
            // The next upload goes to a file of its own, not over the damaged one.
            let next = try ledger.upload([Self.change("j", 2, time: 20, sequence: 2)], to: "s", of: "alice", from: "iPhone")
            #expect(next.push?.revision == 1)
            let aside = try FileManager.default.contentsOfDirectory(atPath: folder + "/accounts/alice").filter { $0.hasPrefix("s.plist.corrupt-") }
            return (state, aside)
        }
        let garbage = Data("not a property list".utf8)
        let (empty, aside) = try outcome(garbage)
        #expect(empty == CloudStoreState())
        #expect(aside.count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/accounts/alice/" + aside[0])) == garbage)
        #expect(reports.lines.count == 1 && reports.lines[0].contains("damaged") && reports.lines[0].contains(path), "\(reports.lines)")
        // A property list of the wrong shape too, named down to the field.
        let (alsoEmpty, _) = try outcome(BinaryPropertyList.encode(["revision": 1, "records": ["k": ["key": "k"]]]))
        #expect(alsoEmpty == CloudStoreState())
        #expect(reports.lines.last?.contains("record k.time must be an integer") == true, "\(reports.lines)")
    }

    /// Unchecked Sendable: the lines are under `lock`.
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var collected: [String] = []
        var lines: [String] { lock.withLock { collected } }
        var record: @Sendable (String, [String: PlistValue]) -> Void {
            { [self] event, fields in lock.withLock { collected.append(event + " " + PlistJSON.encode(.dictionary(fields))) } }
        }
    }

    /// However many stores an account has, each is a file of its own, so
    /// none is refused for the account's size (one file per account was
    /// capped at 16 MiB: the 17th full store was retried for ever).
    @Test func manyFullStoresOfOneAccountAreAllKept() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let big = PlistValue.data(Data(repeating: 7, count: CloudLimits.maximumStoreBytes - 100))
        for index in 1...20 {
            let outcome = try ledger.upload([Self.change("big", big, time: 10, sequence: Int64(index))], to: "s\(index)", of: "alice", from: "iPhone")
            #expect(outcome.refused.isEmpty && outcome.push?.revision == 1, "store \(index): \(outcome.refused)")
        }
        var reopened = CloudLedger(dataFolder: folder)
        #expect(try reopened.stores(of: "alice").count == 20)
        #expect(try reopened.store("s20", of: "alice").values["big"] == big)
    }

    /// The layout before one file per store: an account file is read,
    /// each store gets its own file, and the old file is kept aside.
    @Test func anAccountFileOfTheOldLayoutIsMigrated() throws {
        try FileManager.default.createDirectory(atPath: folder + "/accounts", withIntermediateDirectories: true)
        let record = CloudRecord(key: "k", value: "old", stamp: ChangeStamp(time: 5, device: "iPhone", sequence: 3), revision: 2)
        try BinaryPropertyList.encode(["s": ["revision": 2, "records": ["k": record.plist]]]).write(
            to: URL(fileURLWithPath: folder + "/accounts/alice.plist"))
        let reports = Reports()
        var ledger = CloudLedger(dataFolder: folder, report: reports.record)
        let state = try ledger.store("s", of: "alice")
        #expect(state.revision == 2 && state.records["k"] == record)
        // A device's copy from before generations, at revision 2, goes on without a reset.
        #expect(state.lineage.continues(revision: 2, generation: nil))
        #expect(FileManager.default.fileExists(atPath: folder + "/accounts/alice/s.plist"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/accounts/alice.plist"))
        #expect(reports.lines.contains { $0.hasPrefix("migrated") }, "\(reports.lines)")
        #expect(ledger.knownAccounts == ["alice"])
        // A damaged account file of the old layout is moved aside, named, and the account starts empty.
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: folder + "/accounts/bob.plist"))
        #expect(try ledger.store("s", of: "bob") == CloudStoreState())
        #expect(reports.lines.last?.hasPrefix("damaged") == true && reports.lines.last?.contains("accounts/bob.plist") == true, "\(reports.lines)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/accounts").contains { $0.hasPrefix("bob.plist.corrupt-") })
        // bob holds nothing until its devices give back what they hold.
        #expect(ledger.knownAccounts == ["alice"])
    }

    // MARK: The same stamp, two values

    /// Two writes with one stamp (a device restored from a backup writes
    /// again with a sequence it used, in the same millisecond): the greater
    /// value by `WriteOrder` is kept whatever the order they come in, and the
    /// ack of the lower one carries the winner instead of claiming its value.
    @Test func aTieOfStampsIsBrokenByTheValue() throws {
        let first = Self.change("k", "apple", time: 10)
        let second = Self.change("k", "banana", time: 10)
        var ledger = CloudLedger(dataFolder: folder + "/one")
        _ = try ledger.upload([first], to: "s", of: "alice", from: "iPhone")
        let replaced = try ledger.upload([second], to: "s", of: "alice", from: "iPhone")
        #expect(replaced.push?.records.map(\.value) == ["banana"] && replaced.superseded.isEmpty)
        let lower = try ledger.upload([first], to: "s", of: "alice", from: "iPhone")
        #expect(lower.push == nil && lower.superseded.map(\.value) == ["banana"])
        var reversed = CloudLedger(dataFolder: folder + "/two")
        _ = try reversed.upload([second], to: "s", of: "alice", from: "iPhone")
        let late = try reversed.upload([first], to: "s", of: "alice", from: "iPhone")
        #expect(late.push == nil && late.superseded.map(\.value) == ["banana"])
        #expect(try reversed.store("s", of: "alice").values == ["k": "banana"])
        // A removal is lower than any value of the same stamp.
        let removal = try reversed.upload([Self.change("k", nil, time: 10)], to: "s", of: "alice", from: "iPhone")
        #expect(removal.push == nil && removal.superseded.map(\.value) == ["banana"])
    }

    // MARK: Removals

    /// 25,000 removals in one upload: the store keeps a bounded number, and
    /// a write older than a forgotten removal still loses to it.
    @Test func removalsAreBoundedAndAForgottenOneStillWins() throws {
        var ledger = CloudLedger(dataFolder: folder)
        _ = try ledger.upload([Self.change("k0", "old", time: 1, device: "iPad")], to: "s", of: "alice", from: "iPad")
        let removals = (0..<25_000).map { Self.change("k\($0)", nil, time: 1_000 + Int64($0), sequence: Int64($0) + 1) }
        let outcome = try ledger.upload(removals, to: "s", of: "alice", from: "iPhone")
        #expect(outcome.accepted.count == 25_000 && outcome.refused.isEmpty)
        let state = try ledger.store("s", of: "alice")
        #expect(state.removals <= CloudStoreState.keptRemovals && state.records.count <= CloudStoreState.keptRemovals)
        // Forgotten removals were of revision 2: a device at 1 cannot learn them from the records kept, and takes the whole store.
        #expect(state.lineage.forgotten == 2)
        #expect(state.lineage.forgot(since: 1) && !state.lineage.forgot(since: 2) && !state.lineage.forgot(since: 0))
        #expect(state.values.isEmpty)
        // k0 was removed at 1000: iPad's write of 500 is older, and loses to the forgotten removal.
        let late = try ledger.upload([Self.change("k0", "late", time: 500, device: "iPad", sequence: 2)], to: "s", of: "alice", from: "iPad")
        #expect(late.push == nil && late.superseded.map(\.value) == [nil])
        // A newer write of a forgotten key is kept.
        let newer = try ledger.upload([Self.change("k1", "new", time: 50_000, device: "iPad", sequence: 3)], to: "s", of: "alice", from: "iPad")
        #expect(newer.push?.records.map(\.key) == ["k1"])
        var reopened = CloudLedger(dataFolder: folder)
        let again = try reopened.store("s", of: "alice")
        #expect(again.horizon == state.horizon && again.removals == state.removals && again.values == ["k1": "new"])
    }

    /// A device whose clock runs a day fast (a skew devices may have) churns
    /// removals until the store forgets some: the horizon stays at the
    /// cloud's clock, so a new key written then by a correct clock is kept,
    /// not lost to a removal that was never of it (it was, and 3 s later the
    /// key was gone on its device too).
    @Test func removalsStampedByAFastClockDoNotMakeNewKeysLose() throws {
        let now = DeviceCloudSettings.realTime()
        let day: Int64 = 86_400_000
        var ledger = CloudLedger(dataFolder: folder)
        let removals = (0..<6_000).map { Self.change("churn\($0)", nil, time: now + day + Int64($0), device: "iPad", sequence: Int64($0) + 1) }
        _ = try ledger.upload(removals, to: "s", of: "alice", from: "iPad", now: now)
        let horizon = try #require(try ledger.store("s", of: "alice").horizon)
        #expect(horizon.time <= now, "horizon \(horizon) is ahead of the cloud's clock \(now)")
        let write = try ledger.upload([Self.change("fresh", "kept", time: now + 3_000)], to: "s", of: "alice", from: "iPhone", now: now + 3_000)
        #expect(write.superseded.isEmpty && write.push?.records.map(\.key) == ["fresh"])
        #expect(try ledger.store("s", of: "alice").values == ["fresh": "kept"])
        // A write from before the removals were forgotten, of a key the store has no record of, still loses to them.
        let stale = try ledger.upload([Self.change("old", "lost", time: now - 3_000, sequence: 2)], to: "s", of: "alice", from: "iPhone", now: now)
        #expect(stale.push == nil && stale.superseded.map(\.value) == [nil])
    }

    /// A horizon ten years ahead in a store's file (written by an older
    /// version, or by hand) is brought back to the cloud's clock when the
    /// file is read, and said in the log.
    @Test func aHorizonAheadOfTheClockInTheFileIsBroughtBack() throws {
        let now = DeviceCloudSettings.realTime()
        let ahead = ChangeStamp(time: now + 10 * 365 * 86_400_000, device: "iPad", sequence: 9)
        try FileManager.default.createDirectory(atPath: folder + "/accounts/alice", withIntermediateDirectories: true)
        let store: PlistValue = ["revision": 1, "records": [:], "horizon": .dictionary(ahead.fields)]
        try Data(BinaryPropertyList.encode(store)).write(to: URL(fileURLWithPath: folder + "/accounts/alice/s.plist"))
        let reports = Reports()
        var ledger = CloudLedger(dataFolder: folder, report: reports.record)
        // Read first: the horizon comes back to the clock of that moment, and a write stamped after it is kept.
        let horizon = try #require(try ledger.store("s", of: "alice").horizon)
        #expect(horizon.time <= DeviceCloudSettings.realTime())
        let stamped = DeviceCloudSettings.realTime() + 1_000
        let write = try ledger.upload([Self.change("fresh", "kept", time: stamped)], to: "s", of: "alice", from: "iPhone", now: stamped)
        #expect(write.push?.records.map(\.key) == ["fresh"] && write.superseded.isEmpty)
        #expect(reports.lines.contains { $0.hasPrefix("horizon-bounded") && $0.contains("s.plist") }, "\(reports.lines)")
    }

    /// A store file at the largest revision (2^53 - 1 went to 2^53 + 1, and
    /// every agent then refused the cloud's acks and pushes) starts its
    /// history again: it never counts past the largest revision, keeps
    /// every record, and a device on the old history sees a reset.
    @Test func aStoreAtTheLargestRevisionStartsItsHistoryAgain() throws {
        try FileManager.default.createDirectory(atPath: folder + "/accounts/alice", withIntermediateDirectories: true)
        let old = "old-generation"
        let top = CloudLimits.maximumCounter - 1
        let record = CloudRecord(key: "kept", value: "1", stamp: ChangeStamp(time: 10, device: "iPad", sequence: 1), revision: top)
        let store: PlistValue = [
            "revision": .integer(top), "records": ["kept": record.plist],
            "lineage": StoreLineage(generations: [.init(id: old, through: top)]).plist,
        ]
        try Data(BinaryPropertyList.encode(store)).write(to: URL(fileURLWithPath: folder + "/accounts/alice/s.plist"))
        let reports = Reports()
        var ledger = CloudLedger(dataFolder: folder, report: reports.record)
        var revisions: [Int64] = []
        for index in 1...3 {
            let outcome = try ledger.upload(
                [Self.change("k\(index)", .integer(Int64(index)), time: 20, sequence: Int64(index))], to: "s", of: "alice", from: "iPhone")
            revisions.append(try #require(outcome.push?.revision))
        }
        #expect(revisions.allSatisfy { $0 <= CloudLimits.maximumCounter }, "\(revisions)")
        var reopened = CloudLedger(dataFolder: folder)
        let state = try reopened.store("s", of: "alice")
        #expect(state.values == ["kept": "1", "k1": 1, "k2": 2, "k3": 3])
        #expect(
            !state.lineage.continues(revision: top, generation: old)
                && !state.lineage.continues(revision: CloudLimits.maximumCounter, generation: old))
        #expect(reports.lines.filter { $0.hasPrefix("history-restarted") }.count == 1, "\(reports.lines)")
    }

    /// A record stamped beyond any clock in the cloud's own file (Int64.max
    /// was accepted at start and pinned its key) is checked as an upload is:
    /// the file is set aside as damaged, and a new write of the key is kept.
    @Test func aRecordStampedBeyondAnyClockInTheFileSetsItAside() throws {
        try FileManager.default.createDirectory(atPath: folder + "/accounts/alice", withIntermediateDirectories: true)
        let pinned = CloudRecord(key: "pinned", value: "forever", stamp: ChangeStamp(time: .max, device: "iPad", sequence: 1), revision: 1)
        let store: PlistValue = ["revision": 1, "records": ["pinned": pinned.plist]]
        try Data(BinaryPropertyList.encode(store)).write(to: URL(fileURLWithPath: folder + "/accounts/alice/s.plist"))
        let reports = Reports()
        var ledger = CloudLedger(dataFolder: folder, report: reports.record)
        let write = try ledger.upload([Self.change("pinned", "new", time: DeviceCloudSettings.realTime())], to: "s", of: "alice", from: "iPhone")
        #expect(write.push?.records.map(\.value) == ["new"] && write.superseded.isEmpty)
        #expect(reports.lines.contains { $0.hasPrefix("damaged") && $0.contains("record pinned is stamped \(Int64.max) ms") }, "\(reports.lines)")
    }

    /// A FIFO or a link in place of a store file is never opened nor
    /// followed; it is moved aside like a damaged file and the store goes on
    /// syncing (before, every upload failed with `write-failed` for ever),
    /// whether it was there when the cloud read the store or swapped in after.
    @Test func aFIFOOrLinkInPlaceOfAStoreFileIsMovedAsideAndTheStoreGoesOn() throws {
        let accountFolder = folder + "/accounts/alice"
        try FileManager.default.createDirectory(atPath: accountFolder, withIntermediateDirectories: true)
        #expect(mkfifo(accountFolder + "/s.plist", 0o600) == 0)
        let reports = Reports()
        var ledger = CloudLedger(dataFolder: folder, report: reports.record)
        let first = try ledger.upload([Self.change("a", 1, time: 10)], to: "s", of: "alice", from: "iPhone")
        #expect(first.push?.records.map(\.key) == ["a"])
        // Swapped in while the cloud runs: a link to a file outside, which must stay as it was.
        let outside = root.path + "/outside.plist"
        try Data("untouched".utf8).write(to: URL(fileURLWithPath: outside))
        try FileManager.default.removeItem(atPath: accountFolder + "/s.plist")
        try FileManager.default.createSymbolicLink(atPath: accountFolder + "/s.plist", withDestinationPath: outside)
        let second = try ledger.upload([Self.change("b", 2, time: 11, sequence: 2)], to: "s", of: "alice", from: "iPhone")
        #expect(second.push?.records.map(\.key) == ["b"])
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == "untouched")
        var reopened = CloudLedger(dataFolder: folder)
        #expect(try reopened.store("s", of: "alice").values == ["a": 1, "b": 2])
        let damaged = reports.lines.filter { $0.hasPrefix("damaged") }
        #expect(damaged.count == 2 && damaged[0].contains("FIFO") && damaged[1].contains("link"), "\(reports.lines)")
        let asides = try FileManager.default.contentsOfDirectory(atPath: accountFolder).filter { $0.hasPrefix("s.plist.corrupt-") }
        #expect(asides.count == 2, "\(asides)")
    }

    /// A stamp ten years ahead (a clock that far off is allowed) pinned its
    /// key for ten years. Beyond a day ahead of the cloud's clock a stamp is
    /// ordered, and kept, at the cloud's time plus a day, and its writer is
    /// told that time: within the day a fast clock still wins, after it a
    /// correct clock's write does.
    @Test func aStampFarAheadWinsByADayAtMost() throws {
        let now = DeviceCloudSettings.realTime()
        let day = CloudLimits.maximumStampLeadMilliseconds
        var ledger = CloudLedger(dataFolder: folder)
        let far = Self.change("k", "far", time: now + 10 * 365 * day - 1_000, device: "iPad")
        let kept = try ledger.upload([far], to: "s", of: "alice", from: "iPad", now: now)
        let record = try #require(kept.push?.records.first)
        #expect(record.stamp == ChangeStamp(time: now + day, device: "iPad", sequence: 1) && record.value == "far")
        #expect(kept.accepted == [1] && kept.superseded == [record], "the writer is told the time its write is kept at")
        // The same change sent again (its ack lost) is the same write, not a new one.
        let again = try ledger.upload([far], to: "s", of: "alice", from: "iPad", now: now + 5_000)
        #expect(again.push == nil && again.accepted == [1] && again.superseded == [record])
        // An hour later by a correct clock: it loses, as to any clock that is ahead.
        let early = try ledger.upload([Self.change("k", "early", time: now + 3_600_000)], to: "s", of: "alice", from: "iPhone", now: now + 3_600_000)
        #expect(early.push == nil && early.superseded == [record])
        // A day and a second later, the correct clock wins.
        let later = try ledger.upload(
            [Self.change("k", "later", time: now + day + 1_000, sequence: 2)], to: "s", of: "alice", from: "iPhone", now: now + day + 1_000)
        #expect(later.push?.records.map(\.value) == ["later"] && later.superseded.isEmpty)
    }

    /// What a device gives back after a reset: its own writes as it holds
    /// them, and another device's write only where the store has no record
    /// of the key (what the reset lost). A give-back never rewrites another
    /// device's key under that device's stamp, exact or newer, nor removes
    /// it: the store keeps its record and the giver is told it.
    @Test func aRestoreRewritesNoOtherDevicesKey() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let padWrite = Self.change("k", "pad's", time: 1_000, device: "iPad", sequence: 7)
        _ = try ledger.upload([padWrite], to: "s", of: "alice", from: "iPad")
        let held = try #require(try ledger.store("s", of: "alice").records["k"])
        let forged = [
            Self.change("k", "forged", time: 1_000, device: "iPad", sequence: 7),  // the exact stamp, another value
            Self.change("k", nil, time: 5_000, device: "iPad", sequence: 8),  // a removal as if iPad had made it
        ]
        for change in forged {
            let outcome = try ledger.upload([change], to: "s", of: "alice", from: "iPhone", restoring: true)
            #expect(outcome.push == nil && outcome.superseded == [held], "\(change)")
            #expect(try ledger.store("s", of: "alice").records["k"] == held)
        }
        // A key the store has no record of is filled, whoever wrote it; the giver's own newer write of k is taken.
        let filled = try ledger.upload(
            [Self.change("lost", "back", time: 900, device: "iPad", sequence: 3), Self.change("k", "phone's", time: 2_000, sequence: 1)],
            to: "s", of: "alice", from: "iPhone", restoring: true)
        #expect(filled.push?.records.map(\.key) == ["k", "lost"] && filled.superseded.isEmpty)
    }

    // MARK: History

    /// Each run of the cloud is a generation; a store lists which revisions
    /// each wrote, so a device can tell its revision is on the cloud's history.
    @Test func eachRunOfTheCloudIsAGenerationOfTheStoresHistory() throws {
        var first = CloudLedger(dataFolder: folder)
        _ = try first.upload([Self.change("a", 1, time: 1)], to: "s", of: "alice", from: "iPhone")
        _ = try first.upload([Self.change("b", 1, time: 2, sequence: 2)], to: "s", of: "alice", from: "iPhone")
        var second = CloudLedger(dataFolder: folder)
        _ = try second.upload([Self.change("c", 1, time: 3, sequence: 3)], to: "s", of: "alice", from: "iPhone")
        let lineage = try second.store("s", of: "alice").lineage
        #expect(lineage.generations == [.init(id: first.generation, through: 2), .init(id: second.generation, through: 3)])
        #expect(lineage.continues(revision: 2, generation: first.generation))
        #expect(lineage.continues(revision: 3, generation: second.generation))
        // Revision 3 written by the first run: a history the cloud does not have (restored from a copy taken at 2).
        #expect(!lineage.continues(revision: 3, generation: first.generation))
        #expect(!lineage.continues(revision: 1, generation: "gone"))
        #expect(lineage.continues(revision: 0, generation: nil))
        #expect(!lineage.continues(revision: 4, generation: nil))
    }

    /// A device's copy keeps a value up to 509 levels deep, and the message
    /// carries it: the cloud must store it where a restarted cloud reads it
    /// back, or refuse the change; never write a file it cannot read.
    @Test func aValueAsDeepAsACopyHoldsIsStoredOrRefused() throws {
        var ledger = CloudLedger(dataFolder: folder)
        var deep: PlistValue = 1
        for _ in 0..<509 { deep = .array([deep]) }
        let outcome = try ledger.upload(
            [Self.change("deep", deep, time: 10), Self.change("k", 1, time: 10, sequence: 2)],
            to: "s", of: "alice", from: "iPhone")
        #expect(outcome.accepted.contains(2))
        do {
            var reopened = CloudLedger(dataFolder: folder)
            let state = try reopened.store("s", of: "alice")
            #expect(state.values["k"] == 1)
            #expect(outcome.refused.map(\.key) == ["deep"] || state.values["deep"] == deep)
        }
    }

    /// A removal of a key no store can hold (over 64 bytes) leaves no record
    /// behind: removals are kept for ever and sent to every new device.
    @Test func aRemovalOfAnOverlongKeyLeavesNoRecord() throws {
        var ledger = CloudLedger(dataFolder: folder)
        let long = String(repeating: "k", count: 65)
        _ = try ledger.upload([Self.change(long, nil, time: 10)], to: "s", of: "alice", from: "iPhone")
        do {
            #expect(try ledger.store("s", of: "alice").records[long] == nil)
        }
    }
}

extension CloudLedgerTests {
    /// A write within every limit whose store file would pass the 16 MiB a
    /// file may have (millions of empty arrays count as nothing): refused
    /// once, with the reason, so its device keeps it and never retries;
    /// nothing is written and the store goes on.
    @Test func aStoreFileTooLargeToWriteIsARefusalNotAFailure() throws {
        var ledger = CloudLedger(dataFolder: folder)
        _ = try ledger.upload([Self.change("small", 1, time: 10)], to: "s", of: "alice", from: "iPhone")
        let huge = PlistValue.array(Array(repeating: .array([]), count: 2_200_000))
        let outcome = try ledger.upload(
            [Self.change("huge", huge, time: 11, sequence: 2), Self.change("other", 2, time: 11, sequence: 3)],
            to: "s", of: "alice", from: "iPhone")
        let refusal = outcome.refused.first { $0.key == "huge" }
        #expect(refusal != nil && !outcome.accepted.contains(2), "\(outcome.refused)")
        if CloudLimits.violation(of: ["huge": huge], writing: "huge") == nil {
            // Within the limits as they count: the file is what refuses it, and the whole upload with it.
            #expect(refusal?.reason.contains("over the 16777216") == true, "\(outcome.refused)")
            #expect(outcome.push == nil && outcome.refused.map(\.key).sorted() == ["huge", "other"])
        }
        #expect(try ledger.store("s", of: "alice").values["huge"] == nil)
        let next = try ledger.upload([Self.change("after", 3, time: 12, sequence: 4)], to: "s", of: "alice", from: "iPhone")
        #expect(next.push != nil && next.refused.isEmpty)
    }
}
