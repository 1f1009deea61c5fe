import CloudModel
import Foundation
import PropertyList
import Testing
import TestSupport
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
        var ledger = try CloudLedger(dataFolder: folder)
        #expect(try ledger.stores(of: "bob").isEmpty)
        #expect(try ledger.store("com.example.notes", of: "bob").records.isEmpty)
        #expect(!ledger.knownAccounts.contains("bob"))
        _ = try ledger.upload([Self.change("k", 1, time: 10)], to: "com.example.notes", of: "bob", from: "iPhone")
        #expect(ledger.knownAccounts.contains("bob"))
    }

    /// A revision no history reaches, in an account's file, is an error that
    /// names the file and the store: the next upload would count past Int64.max.
    @Test func anAccountFileWithAnImpossibleRevisionIsRefused() throws {
        try FileManager.default.createDirectory(atPath: folder + "/accounts", withIntermediateDirectories: true)
        let store: PlistValue = ["revision": .integer(.max), "records": [:]]
        try Data(BinaryPropertyList.encode(["s": store])).write(to: URL(fileURLWithPath: folder + "/accounts/alice.plist"))
        var ledger = try CloudLedger(dataFolder: folder)
        do {
            _ = try ledger.upload([Self.change("k", 1, time: 10)], to: "s", of: "alice", from: "iPhone")
            Issue.record("an upload counted on from Int64.max")
        } catch {
            #expect("\(error)".contains("alice.plist store s.revision must be a revision (from 0 to 9007199254740992), found 9223372036854775807"), "\(error)")
        }
    }

    @Test func anUploadIsOnDiskBeforeUploadReturns() throws {
        var ledger = try CloudLedger(dataFolder: folder)
        let outcome = try ledger.upload([Self.change("k", ["nested": [1]], time: 10), Self.change("gone", nil, time: 10, sequence: 2)],
                                        to: "com.example.notes", of: "alice@example.com", from: "iPhone")
        #expect(outcome.accepted == [1, 2] && outcome.refused.isEmpty && outcome.superseded.isEmpty)
        #expect(outcome.push?.base == 0 && outcome.push?.revision == 1 && outcome.push?.records.map(\.key) == ["gone", "k"])
        #expect(FileManager.default.fileExists(atPath: folder + "/accounts/alice@example.com.plist"))
        // A new ledger on the same folder (a restarted cloud) reads it back.
        var reopened = try CloudLedger(dataFolder: folder)
        let state = try reopened.store("com.example.notes", of: "alice@example.com")
        #expect(state.revision == 1)
        #expect(state.records["k"] == CloudRecord(key: "k", value: ["nested": [1]], stamp: ChangeStamp(time: 10, device: "iPhone", sequence: 1), revision: 1))
        #expect(state.records["gone"]?.value == nil && state.records["gone"]?.revision == 1)
        #expect(state.values == ["k": ["nested": [1]]])
        #expect(reopened.knownAccounts == ["alice@example.com"])
        #expect(try reopened.store("other", of: "alice@example.com") == CloudStoreState())
    }

    @Test func theSameChangeAgainChangesNothing() throws {
        var ledger = try CloudLedger(dataFolder: folder)
        let change = Self.change("k", 1, time: 10)
        _ = try ledger.upload([change], to: "s", of: "alice", from: "iPhone")
        let again = try ledger.upload([change], to: "s", of: "alice", from: "iPhone")
        #expect(again.accepted == [1] && again.refused.isEmpty && again.superseded.isEmpty && again.push == nil)
        #expect(try ledger.store("s", of: "alice").revision == 1)
        var reopened = try CloudLedger(dataFolder: folder)
        #expect(try reopened.store("s", of: "alice").revision == 1)
    }

    @Test func anOlderChangeIsAcceptedAndTheWinnerReturned() throws {
        var ledger = try CloudLedger(dataFolder: folder)
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
        var ledger = try CloudLedger(dataFolder: folder)
        _ = try ledger.upload([Self.change("k", 1, time: 10), Self.change("j", 2, time: 10, sequence: 2)], to: "s", of: "alice", from: "iPhone")
        let removal = try ledger.upload([Self.change("k", nil, time: 30, sequence: 3)], to: "s", of: "alice", from: "iPhone")
        #expect(removal.push?.records == [CloudRecord(key: "k", value: nil, stamp: ChangeStamp(time: 30, device: "iPhone", sequence: 3), revision: 2)])
        let late = try ledger.upload([Self.change("k", "late", time: 20, device: "iPad")], to: "s", of: "alice", from: "iPad")
        #expect(late.superseded.map(\.value) == [nil])
        let state = try ledger.store("s", of: "alice")
        #expect(state.values == ["j": 2])
        // A device that has revision 1 gets the removal; one that has nothing gets both keys.
        #expect(state.changes(since: 1) == [CloudRecord(key: "k", value: nil, stamp: ChangeStamp(time: 30, device: "iPhone", sequence: 3), revision: 2)])
        #expect(state.changes(since: 0).map(\.key) == ["j", "k"])
        #expect(state.changes(since: 2).isEmpty)
    }

    @Test func aChangeStampedByAnotherDeviceIsRefused() throws {
        var ledger = try CloudLedger(dataFolder: folder)
        let outcome = try ledger.upload([Self.change("k", 1, time: 10, device: "iPad", sequence: 4), Self.change("j", 2, time: 10)],
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
        var ledger = try CloudLedger(dataFolder: folder)
        let composed = "Caf\u{E9}", decomposed = "Cafe\u{301}"
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
        var ledger = try CloudLedger(dataFolder: folder)
        let full = (1...1024).map { Self.change("key\($0)", .integer(Int64($0)), time: 10, sequence: Int64($0)) }
        let first = try ledger.upload(full, to: "s", of: "alice", from: "iPhone")
        #expect(first.accepted.count == 1024 && first.refused.isEmpty)
        let over = try ledger.upload([Self.change("key1025", 1025, time: 11, sequence: 1025)], to: "s", of: "alice", from: "iPhone")
        #expect(over.refused == [RefusedChange(key: "key1025", sequence: 1025, reason: "the store would hold 1025 keys; it may hold at most 1024")])
        #expect(over.accepted.isEmpty && over.push == nil)
        // A key written again is not a new key; a removal makes room.
        let rewrite = try ledger.upload([Self.change("key1", "again", time: 12, sequence: 1026)], to: "s", of: "alice", from: "iPhone")
        #expect(rewrite.refused.isEmpty)
        let room = try ledger.upload([Self.change("key2", nil, time: 13, sequence: 1027), Self.change("key1025", 1025, time: 13, sequence: 1028)],
                                     to: "s", of: "alice", from: "iPhone")
        #expect(room.refused.isEmpty && room.accepted == [1027, 1028])
        var reopened = try CloudLedger(dataFolder: folder)
        #expect(try reopened.store("s", of: "alice").values.count == 1024)
    }

    @Test func aValueOverTheLimitIsRefusedAndNothingElseChanges() throws {
        var ledger = try CloudLedger(dataFolder: folder)
        let big = CloudLimitsTests.value(ofSize: CloudLimits.maximumValueBytes + 1)
        let outcome = try ledger.upload([Self.change("big", big, time: 10), Self.change("small", 1, time: 10, sequence: 2)],
                                        to: "s", of: "alice", from: "iPhone")
        #expect(outcome.refused.map(\.key) == ["big"] && outcome.refused.first?.reason.contains("a value may have at most") == true)
        #expect(outcome.accepted == [2])
        #expect(try ledger.store("s", of: "alice").values == ["small": 1])
    }

    @Test func accountsAreSeparateFiles() throws {
        var ledger = try CloudLedger(dataFolder: folder)
        _ = try ledger.upload([Self.change("k", 1, time: 10)], to: "s", of: "alice", from: "iPhone")
        _ = try ledger.upload([Self.change("k", 2, time: 10)], to: "s", of: "bob", from: "iPhone")
        var reopened = try CloudLedger(dataFolder: folder)
        #expect(try reopened.store("s", of: "alice").values == ["k": 1])
        #expect(try reopened.store("s", of: "bob").values == ["k": 2])
        #expect(reopened.knownAccounts == ["alice", "bob"])
        #expect(throws: (any Error).self) { try reopened.upload([Self.change("k", 1, time: 10)], to: "s", of: "../escape", from: "iPhone") }
    }

    @Test func aMalformedLedgerFileIsRefusedNamingIt() throws {
        _ = try CloudLedger(dataFolder: folder)
        let path = folder + "/accounts/alice.plist"
        func refusal(_ contents: [String: PlistValue]) throws -> String {
            try BinaryPropertyList.encode(.dictionary(contents)).write(to: URL(fileURLWithPath: path))
            var ledger = try CloudLedger(dataFolder: folder)
            do { return "accepted as \(try ledger.stores(of: "alice"))" } catch { return "\(error)" }
        }
        #expect(try refusal(["s": 5]) == "\(path) store s must be an object, found an integer")
        #expect(try refusal(["s": ["records": [:]]]) == "\(path) store s.revision must be an integer")
        #expect(try refusal(["s": ["revision": 1, "records": ["k": ["key": "k"]]]]) == "\(path) store s record k.time must be an integer")
        #expect(try refusal(["s": ["revision": 1, "records": ["k": 1]]]) == "\(path) store s record k must be an object, found an integer")
    }

    /// A device's copy keeps a value up to 509 levels deep, and the message
    /// carries it: the cloud must store it where a restarted cloud reads it
    /// back, or refuse the change; never write a file it cannot read.
    @Test func aValueAsDeepAsACopyHoldsIsStoredOrRefused() throws {
        var ledger = try CloudLedger(dataFolder: folder)
        var deep: PlistValue = 1
        for _ in 0..<509 { deep = .array([deep]) }
        let outcome = try ledger.upload([Self.change("deep", deep, time: 10), Self.change("k", 1, time: 10, sequence: 2)],
                                        to: "s", of: "alice", from: "iPhone")
        #expect(outcome.accepted.contains(2))
        do {
            var reopened = try CloudLedger(dataFolder: folder)
            let state = try reopened.store("s", of: "alice")
            #expect(state.values["k"] == 1)
            #expect(outcome.refused.map(\.key) == ["deep"] || state.values["deep"] == deep)
        }
    }

    /// A removal of a key no store can hold (over 64 bytes) leaves no record
    /// behind: removals are kept for ever and sent to every new device.
    @Test func aRemovalOfAnOverlongKeyLeavesNoRecord() throws {
        var ledger = try CloudLedger(dataFolder: folder)
        let long = String(repeating: "k", count: 65)
        _ = try ledger.upload([Self.change(long, nil, time: 10)], to: "s", of: "alice", from: "iPhone")
        do {
            #expect(try ledger.store("s", of: "alice").records[long] == nil)
        }
    }
}
