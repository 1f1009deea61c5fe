import CloudModel
import Foundation
import PropertyBased
import PropertyList
import Testing

@testable import CloudDevice

/// A device's copy of a store: local writes at once, pending until the
/// cloud accepts them; the cloud's records merged by stamp; the notices
/// every process of the app posts.
@Suite struct StoreCopyTests {
    static func signedIn() -> StoreCopy {
        var copy = StoreCopy()
        copy.switchAccount(to: "alice")
        return copy
    }

    static func record(_ key: String, _ value: PlistValue?, time: Int64, device: String = "iPad", sequence: Int64 = 1, revision: Int64 = 1)
        -> CloudRecord
    {
        CloudRecord(key: key, value: value, stamp: ChangeStamp(time: time, device: device, sequence: sequence), revision: revision)
    }

    /// A value whose binary form is `size` bytes.
    static func blob(_ size: Int) -> PlistValue { CloudLimitsTests.value(ofSize: size) }

    // MARK: Local writes

    @Test func aWriteReplacesThePendingWriteOfItsKey() {
        var copy = Self.signedIn()
        copy.write(1, forKey: "k", device: "iPhone", time: 10)
        copy.write(2, forKey: "k", device: "iPhone", time: 11)
        copy.write(3, forKey: "other", device: "iPhone", time: 12)
        #expect(copy.values == ["k": 2, "other": 3])
        #expect(copy.pending.count == 2)
        #expect(copy.pending["k"]?.value == 2 && copy.pending["k"]?.stamp == ChangeStamp(time: 11, device: "iPhone", sequence: 2))
        #expect(copy.uploads.map(\.key) == ["k", "other"])  // oldest first
        #expect(copy.uploads.first == UploadedChange(key: "k", value: 2, stamp: ChangeStamp(time: 11, device: "iPhone", sequence: 2)))
        // A removal is a pending write too.
        copy.write(nil, forKey: "k", device: "iPhone", time: 13)
        #expect(
            copy.values["k"] == nil
                && copy.uploads.last == UploadedChange(key: "k", value: nil, stamp: ChangeStamp(time: 13, device: "iPhone", sequence: 4)))
        // Local writes are never announced.
        #expect(copy.notices.isEmpty)
    }

    @Test func writingTheValueAlreadyThereWithNothingPendingDoesNothing() {
        var copy = Self.signedIn()
        copy.apply([Self.record("k", "same", time: 5)], revision: 1, initial: true)
        let before = copy
        #expect(copy.write("same", forKey: "k", device: "iPhone", time: 10) == nil)
        #expect(copy == before)
        // Removing a key that is not there is the same.
        copy.write(nil, forKey: "absent", device: "iPhone", time: 10)
        #expect(copy == before)
        // With a write pending, the same value is a newer write: it takes a new stamp.
        copy.write("other", forKey: "k", device: "iPhone", time: 11)
        copy.write("other", forKey: "k", device: "iPhone", time: 12)
        #expect(copy.pending["k"]?.stamp.time == 12)
    }

    @Test func anOverQuotaWriteStaysOnTheDevice() {
        var copy = Self.signedIn()
        let tooBig = Self.blob(CloudLimits.maximumValueBytes + 1)
        let violation = copy.write(tooBig, forKey: "big", device: "iPhone", time: 10)
        #expect(violation?.contains("a value may have at most 1048576") == true)
        #expect(copy.values["big"] == tooBig)  // the app still reads it
        #expect(copy.pending["big"]?.overQuota == true)
        #expect(copy.uploads.isEmpty)
        #expect(copy.notices.map(\.change) == [ExternalChange(reason: .quotaViolationChange, keys: ["big"])])
        // It does not count against later writes.
        #expect(copy.write(Self.blob(1000), forKey: "small", device: "iPhone", time: 11) == nil)
        #expect(copy.uploads.map(\.key) == ["small"])
        // Nor does a write over the store's total.
        #expect(copy.write(Self.blob(600_000), forKey: "a", device: "iPhone", time: 12) == nil)
        #expect(copy.write(Self.blob(600_000), forKey: "b", device: "iPhone", time: 13)?.hasPrefix("the store would hold") == true)
        #expect(copy.write(Self.blob(300_000), forKey: "c", device: "iPhone", time: 14) == nil)
        #expect(copy.uploads.map(\.key) == ["small", "a", "c"])
        #expect(copy.notices.map(\.change.keys) == [["big"], ["b"]])
        // A write within the limits takes the key back up.
        #expect(copy.write(1, forKey: "big", device: "iPhone", time: 15) == nil)
        #expect(copy.uploads.map(\.key) == ["small", "a", "c", "big"])
    }

    // MARK: The agent

    @Test func acknowledgingAnOlderWriteKeepsTheNewerOnePending() {
        var copy = Self.signedIn()
        copy.write(1, forKey: "k", device: "iPhone", time: 10)  // sequence 1, uploaded
        copy.write(2, forKey: "k", device: "iPhone", time: 11)  // sequence 2, written while 1 was on its way
        copy.acknowledge([1])
        #expect(copy.pending["k"]?.value == 2 && copy.uploads.count == 1)
        copy.acknowledge([2, 99])
        #expect(copy.pending.isEmpty && copy.values == ["k": 2])
    }

    @Test func aRefusedWriteStaysLocalAndIsAnnounced() {
        var copy = Self.signedIn()
        copy.write(1, forKey: "k", device: "iPhone", time: 10)
        copy.write(2, forKey: "j", device: "iPhone", time: 11)
        // A refusal of a write that was since replaced does nothing.
        copy.refuse([RefusedChange(key: "k", sequence: 7, reason: "quota")])
        #expect(copy.notices.isEmpty && copy.uploads.count == 2)
        copy.refuse([RefusedChange(key: "k", sequence: 1, reason: "quota"), RefusedChange(key: "j", sequence: 2, reason: "quota")])
        #expect(copy.uploads.isEmpty && copy.values == ["k": 1, "j": 2])
        #expect(copy.notices.map(\.change) == [ExternalChange(reason: .quotaViolationChange, keys: ["j", "k"])])
    }

    @Test func aNewerLocalWriteOutlivesAnOlderRecordAndAnOlderOneGoes() {
        var copy = Self.signedIn()
        copy.apply([], revision: 0, initial: true)
        copy.write("local", forKey: "k", device: "iPhone", time: 100)
        // The cloud's record is older: the local write stays, shown and pending.
        #expect(copy.apply([Self.record("k", "older", time: 50)], revision: 1, initial: false) == [])
        #expect(copy.values["k"] == "local" && copy.pending["k"] != nil)
        // A newer record wins: the local write is dropped, and the change announced.
        #expect(copy.apply([Self.record("k", "newer", time: 200, revision: 2)], revision: 2, initial: false) == ["k"])
        #expect(copy.values["k"] == "newer" && copy.pending.isEmpty && copy.revision == 2)
        #expect(copy.notices.last?.change == ExternalChange(reason: .serverChange, keys: ["k"]))
        // The cloud echoing this device's own write: no longer pending, nothing announced.
        copy.write("mine", forKey: "k", device: "iPhone", time: 300)
        let echo = CloudRecord(key: "k", value: "mine", stamp: copy.pending["k"]!.stamp, revision: 3)
        let noticesBefore = copy.notices
        #expect(copy.apply([echo], revision: 3, initial: false) == [])
        #expect(copy.pending.isEmpty && copy.values["k"] == "mine" && copy.notices == noticesBefore)
        // The same time on two devices: the device name decides ("iPad" < "iPhone").
        copy.write("phone", forKey: "t", device: "iPhone", time: 400)
        copy.apply([Self.record("t", "pad", time: 400, device: "iPad", sequence: 99, revision: 4)], revision: 4, initial: false)
        #expect(copy.values["t"] == "phone" && copy.pending["t"] != nil)
    }

    @Test func theFirstDownloadIsAnnouncedEvenWhenEmpty() {
        var copy = Self.signedIn()
        #expect(copy.apply([], revision: 0, initial: true) == [])
        #expect(copy.initialSyncDone)
        #expect(copy.notices.map(\.change) == [ExternalChange(reason: .initialSyncChange, keys: [])])
        // Only once per account.
        copy.apply([], revision: 0, initial: true)
        #expect(copy.notices.count == 1)
        copy.apply([Self.record("k", 1, time: 1)], revision: 1, initial: true)
        #expect(copy.notices.map(\.change.reason) == [.initialSyncChange, .serverChange])
        // With values, the first download names them.
        var other = Self.signedIn()
        other.apply([Self.record("b", 1, time: 1), Self.record("a", 2, time: 1)], revision: 3, initial: true)
        #expect(other.notices.map(\.change) == [ExternalChange(reason: .initialSyncChange, keys: ["a", "b"])])
        // Not the first download: nothing new, nothing announced.
        other.apply([Self.record("a", 2, time: 1)], revision: 4, initial: false)
        #expect(other.notices.count == 1 && other.revision == 4)
    }

    @Test func aCorrectionIsAServerChange() {
        var copy = Self.signedIn()
        copy.write("lost", forKey: "k", device: "iPhone", time: 10)
        copy.acknowledge([1])
        #expect(copy.correct([Self.record("k", "won", time: 20)]) == ["k"])
        #expect(copy.values["k"] == "won" && copy.revision == 0)
        #expect(copy.notices.map(\.change) == [ExternalChange(reason: .serverChange, keys: ["k"])])
        #expect(copy.correct([Self.record("k", "won", time: 20)]) == [])
        #expect(copy.notices.count == 1)
    }

    @Test func leavingAnAccountTakesItsValuesOff() {
        var copy = Self.signedIn()
        copy.apply([Self.record("b", 1, time: 1)], revision: 5, initial: true)
        copy.write(2, forKey: "a", device: "iPhone", time: 10)
        copy.switchAccount(to: "bob")
        #expect(copy.account == "bob" && copy.values.isEmpty && copy.pending.isEmpty)
        #expect(copy.revision == 0 && !copy.initialSyncDone)
        #expect(copy.notices.last?.change == ExternalChange(reason: .accountChange, keys: ["a", "b"]))
        // Signing out is leaving too.
        copy.write(3, forKey: "c", device: "iPhone", time: 11)
        copy.switchAccount(to: nil)
        #expect(copy.account == nil && copy.values.isEmpty)
        #expect(copy.notices.last?.change == ExternalChange(reason: .accountChange, keys: ["c"]))
        // The same account again changes nothing.
        let before = copy
        copy.switchAccount(to: nil)
        #expect(copy == before)
    }

    @Test func signingInKeepsWhatWasWrittenWithNoAccount() {
        var copy = StoreCopy()
        copy.write(1, forKey: "k", device: "iPhone", time: 10)
        copy.switchAccount(to: "alice")
        #expect(copy.account == "alice" && copy.values == ["k": 1] && copy.pending["k"]?.value == 1)
        #expect(copy.notices.isEmpty && copy.uploads.count == 1)
    }

    /// The cloud kept this device's write at a bounded time (its clock was
    /// years ahead): the copy takes that time from the ack, so a later write
    /// of another device wins here as it does in the cloud (before, the copy
    /// kept its own far stamp and ignored every later write of the key).
    @Test func aWriteKeptAtABoundedTimeIsOrderedThereOnItsWriterToo() throws {
        var copy = Self.signedIn()
        let day = CloudLimits.maximumStampLeadMilliseconds
        copy.write("far", forKey: "k", device: "iPad", time: 10 * 365 * day)
        let kept = Self.record("k", "far", time: 1_000 + day)
        copy.acknowledge([1])
        #expect(copy.correct([kept], device: "iPad") == [], "the value is the same: nothing to announce")
        #expect(copy.stamps["k"] == kept.stamp)
        #expect(copy.apply([Self.record("k", "later", time: 2_000 + day, device: "iPhone", revision: 2)], revision: 2, initial: false) == ["k"])
        #expect(copy.values["k"] == "later")
        // Without the device named, a record lower than what the copy holds is not taken (another device's answer).
        var other = Self.signedIn()
        other.write("far", forKey: "k", device: "iPad", time: 10 * 365 * day)
        other.acknowledge([1])
        other.correct([kept])
        #expect(other.stamps["k"]?.time == 10 * 365 * day)
    }

    /// A device keeps removals as the cloud does: at most
    /// `CloudLimits.keptRemovals`, the oldest forgotten first, a pending one
    /// never (320,000 removals pushed to a device made its copy 48 MB).
    @Test func removalsAreBoundedOnTheDeviceAsInTheCloud() throws {
        var copy = Self.signedIn()
        copy.write(1, forKey: "live", device: "iPhone", time: 1)
        copy.write(1, forKey: "mine", device: "iPhone", time: 2)
        copy.acknowledge([1, 2])
        copy.write(nil, forKey: "mine", device: "iPhone", time: 3)
        let removals = (0..<20_000).map { Self.record("r\($0)", nil, time: 100 + Int64($0), revision: Int64($0) + 1) }
        copy.apply(removals, revision: 20_000, initial: false)
        #expect(copy.removalCount <= CloudLimits.keptRemovals && copy.removalCount >= CloudLimits.keptRemovals * 3 / 4)
        #expect(copy.pending["mine"] != nil && copy.stamps["mine"] != nil, "a pending removal is kept until the cloud has it")
        #expect(copy.values == ["live": 1])
        #expect(copy.stamps["r19999"] != nil && copy.stamps["r0"] == nil, "the oldest go first")
        #expect(BinaryPropertyList.encode(.dictionary(copy.plist)).count < 512 * 1024)
        // Once the cloud has it, the pending removal may go like any other.
        copy.acknowledge([3])
        #expect(copy.removalCount <= CloudLimits.keptRemovals)
    }

    @Test func noticesAreBounded() throws {
        var copy = Self.signedIn()
        for index in 0..<(StoreCopy.keptNotices + 8) {
            copy.correct([Self.record("k", .integer(Int64(index)), time: Int64(index))])
        }
        #expect(copy.notices.count == StoreCopy.keptNotices)
        #expect(copy.lastNoticeSerial == Int64(StoreCopy.keptNotices + 8))
        #expect(copy.notices.map(\.serial) == Array(9...Int64(StoreCopy.keptNotices + 8)))
        // The bound survives the file.
        #expect(try StoreCopy(copy.plist, path: "copy.plist") == copy)
    }

    // MARK: The file

    @Test func everyPartSurvivesTheFile() throws {
        var copy = Self.signedIn()
        copy.apply([Self.record("b", ["nested": [1, 2]], time: 1)], revision: 9, initial: true)
        copy.write(Self.blob(CloudLimits.maximumValueBytes + 1), forKey: "big", device: "iPhone", time: 10)
        copy.write(nil, forKey: "b", device: "iPhone", time: 11)
        copy.write(.date(Date(timeIntervalSinceReferenceDate: 1.5)), forKey: "d", device: "iPhone", time: 12)
        #expect(try StoreCopy(copy.plist, path: "copy.plist") == copy)
        // Through the file's own form too.
        let file = try BinaryPropertyList.decode(BinaryPropertyList.encode(.dictionary(copy.plist)))
        #expect(try StoreCopy(file.dictionaryValue ?? [:], path: "copy.plist") == copy)
        #expect(try StoreCopy(StoreCopy().plist, path: "copy.plist") == StoreCopy())
        #expect(try StoreCopy([:], path: "copy.plist") == StoreCopy())
    }

    /// A copy read from its file writes back the stamps it read: a stamp
    /// that did not change is the file's own dictionary (what a commit's diff
    /// then finds equal at once), a changed one is made anew, and a stamp
    /// with a field besides its three is written as a stamp writes it.
    @Test func aCopyWritesBackTheStampsItRead() throws {
        var written = Self.signedIn()
        for index in 0..<20 { written.write(.string("v\(index)"), forKey: "k\(index)", device: "a device with a long name", time: Int64(index)) }
        var file = try #require(BinaryPropertyList.decode(BinaryPropertyList.encode(.dictionary(written.plist))).dictionaryValue)
        var stamps = try #require(file["stamps"]?.dictionaryValue)
        stamps["k3"] = .dictionary((stamps["k3"]?.dictionaryValue ?? [:]).merging(["extra": .bool(true)]) { $1 })
        file["stamps"] = .dictionary(stamps)
        var copy = try StoreCopy(file, path: "copy.plist")
        copy.write(.string("new"), forKey: "k7", device: "iPhone", time: 100)
        let canonical = copy.stamps.mapValues { PlistValue.dictionary($0.fields) }
        let writtenStamps = try #require(copy.plist["stamps"]?.dictionaryValue)
        #expect(writtenStamps == canonical)
        #expect(writtenStamps["k3"]?.dictionaryValue?["extra"] == nil)
        func deviceStorage(_ stamps: [String: PlistValue], _ key: String) -> UnsafeRawPointer? {
            guard case .string(var device)? = stamps[key]?.dictionaryValue?["device"] else { return nil }
            return device.withUTF8 { UnsafeRawPointer($0.baseAddress) }
        }
        #expect(deviceStorage(writtenStamps, "k12") == deviceStorage(stamps, "k12"))
        #expect(deviceStorage(writtenStamps, "k7") != deviceStorage(stamps, "k7"))
        #expect(try StoreCopy(copy.plist, path: "copy.plist") == copy)
        // Merged records, a first download's drop and a sign-out change the stamps written too.
        copy.apply([Self.record("k1", "cloud", time: 1_000)], revision: 2, initial: false)
        #expect(copy.plist["stamps"]?.dictionaryValue == copy.stamps.mapValues { PlistValue.dictionary($0.fields) })
        copy.switchAccount(to: nil)
        #expect(copy.plist["stamps"]?.dictionaryValue == [:])
    }

    /// A pending write's value is the key's value: the file holds it once,
    /// so a big value kept on the device costs its size, not twice that.
    @Test func aPendingValueIsStoredOnce() throws {
        var copy = Self.signedIn()
        let big = PlistValue.data(Data(count: 4 << 20))
        copy.write(big, forKey: "big", device: "iPhone", time: 10)
        copy.write(nil, forKey: "gone", device: "iPhone", time: 11)
        copy.write(.string("gone"), forKey: "gone", device: "iPhone", time: 12)
        copy.write(nil, forKey: "gone", device: "iPhone", time: 13)
        #expect(copy.pending["big"]?.value == big && copy.pending["gone"] != nil && copy.pending["gone"]?.value == nil)
        let fields = copy.plist
        #expect(fields["pending"]?.dictionaryValue?["big"]?.dictionaryValue?["value"] == nil)
        #expect(BinaryPropertyList.encode(.dictionary(fields)).count < (4 << 20) + 4096)
        #expect(try StoreCopy(fields, path: "copy.plist") == copy)
        // A file written before, with the value beside the pending write too, reads the same.
        var older = fields
        older["pending"] = .dictionary([
            "big": .dictionary((fields["pending"]?.dictionaryValue?["big"]?.dictionaryValue ?? [:]).merging(["value": big]) { $1 }),
            "gone": fields["pending"]?.dictionaryValue?["gone"] ?? .bool(false),
        ])
        #expect(try StoreCopy(older, path: "copy.plist") == copy)
    }

    /// Whatever numbers a file holds, a copy read from it never overflows:
    /// one that loads can be written to, sent records and notified (each
    /// counting on), and one that holds a counter no device reaches is
    /// refused naming it, the same refusal that keeps the file aside.
    @Test func aCopyFromAnyCountersLoadsWithinTheLimitOrIsRefusedNamingIt() async {
        await propertyCheck(count: 400, input: CloudGen.edgeNumbers) { numbers in
            var fields = Self.signedIn().plist
            fields["nextSequence"] = .integer(numbers[0])
            fields["revision"] = .integer(numbers[1])
            fields["notices"] = [["serial": .integer(numbers[2]), "reason": "server-change", "keys": []]]
            let possible =
                (1...CloudLimits.maximumCounter).contains(numbers[0]) && (0...CloudLimits.maximumCounter).contains(numbers[1])
                && (1...CloudLimits.maximumCounter).contains(numbers[2])
            #expect((StoreCopy.impossibleNumber(in: fields) == nil) == possible, "\(numbers)")
            do {
                var copy = try StoreCopy(fields, path: "copy.plist")
                #expect(possible, "\(numbers) loaded")
                copy.write(1, forKey: "k", device: "iPhone", time: .max)
                copy.apply([Self.record("j", 2, time: .min, revision: .max)], revision: CloudLimits.maximumCounter, initial: true)
                copy.correct([Self.record("k", 3, time: .max, device: "iPad", sequence: .max)])
                #expect(copy.nextSequence <= CloudLimits.maximumCounter + 1 && copy.lastNoticeSerial <= CloudLimits.maximumCounter + 3)
            } catch {
                #expect(!possible, "\(numbers) refused: \(error)")
                #expect("\(error)".hasPrefix("copy.plist: ") && "\(error)".contains("no count of writes reaches"), "\(error)")
            }
        }
    }

    /// A clock skew from a file is used only within ten years either way, so
    /// a stamp (the real time plus the skew) never overflows; any other
    /// number is ignored and said (file, field, value), and the rest of the
    /// settings, the account first, is still read.
    @Test func aClockSkewFromAnyNumberIsUsedOnlyWithinTenYears() async {
        await propertyCheck(count: 300, input: CloudGen.edgeNumbers) { numbers in
            let skew = numbers[0]
            let within = (-DeviceCloudSettings.maximumClockSkewMilliseconds...DeviceCloudSettings.maximumClockSkewMilliseconds).contains(skew)
            let settings = try DeviceCloudSettings(["clockSkewMilliseconds": .integer(skew), "account": "alice"], path: "device.plist")
            #expect(settings.account == "alice", "\(skew)")
            #expect(settings.clockSkewMilliseconds == (within ? skew : 0), "\(skew)")
            #expect(settings.problems.isEmpty == within, "\(skew)")
            if !within {
                #expect(
                    settings.problems.count == 1 && settings.problems[0].hasPrefix("device.plist: clockSkewMilliseconds is \(skew)"),
                    "\(settings.problems)")
            }
            #expect(DeviceCloudSettings.realTime().addingReportingOverflow(settings.clockSkewMilliseconds).overflow == false)
        }
    }

    @Test func aMalformedFileIsRefusedNamingThePathAndTheField() {
        let path = "/sim/devices/iPhone/cloud/stores/s.plist"
        func refusal(_ change: (inout [String: PlistValue]) -> Void) -> String {
            var fields = Self.signedIn().plist
            change(&fields)
            do { return "accepted as \(try StoreCopy(fields, path: path))" } catch { return error.description }
        }
        let cases: [(String, (inout [String: PlistValue]) -> Void)] = [
            ("account must be a string", { $0["account"] = 5 }),
            ("values must be an object", { $0["values"] = [1] }),
            ("revision must be an integer", { $0["revision"] = "7" }),
            ("initialSyncDone must be true or false", { $0["initialSyncDone"] = 1 }),
            ("nextSequence must be an integer", { $0["nextSequence"] = 1.5 }),
            ("pending must be an object", { $0["pending"] = "x" }),
            ("pending.k must be an object, found an integer", { $0["pending"] = ["k": 1] }),
            ("pending.k.time must be an integer", { $0["pending"] = ["k": ["device": "d", "sequence": 1]] }),
            ("pending.k.device must be a string", { $0["pending"] = ["k": ["time": 1, "device": 2, "sequence": 1]] }),
            ("pending.k.overQuota must be true or false", { $0["pending"] = ["k": ["time": 1, "device": "d", "sequence": 1, "overQuota": "yes"]] }),
            ("notices must be an array", { $0["notices"] = [:] }),
            ("notices[0] must be an object, found a string", { $0["notices"] = ["x"] }),
            (
                "notices[0].reason is not one of server-change, initial-sync-change, quota-violation-change, account-change",
                { $0["notices"] = [["serial": 1, "reason": "fly", "keys": []]] }
            ),
            ("notices[0].serial must be an integer", { $0["notices"] = [["reason": "server-change", "keys": []]] }),
            ("notices[0].keys must be an array", { $0["notices"] = [["serial": 1, "reason": "server-change", "keys": "k"]] }),
        ]
        for (expected, change) in cases {
            let text = refusal(change)
            #expect(text.hasPrefix(path) && text.contains(expected), "\(text)")
        }
        do {
            let text = refusal { $0["notices"] = [["serial": 1, "reason": "server-change", "keys": ["a", 7]]] }
            #expect(text.hasPrefix(path) && text.contains("notices[0].keys"), "\(text)")
        }
    }
}
