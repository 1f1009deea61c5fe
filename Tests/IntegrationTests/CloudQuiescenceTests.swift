import CloudDevice
import CloudModel
import Testing

@testable import Scenarios

/// `wait-cloud` lets the next step run only when each device's side is
/// settled. These are the device-side conditions, checked on copies built
/// in memory; the scenarios under `scenarios/cloud/` run them for real.
@Suite struct CloudQuiescenceTests {
    func settledCopy(account: String = "alice") -> StoreCopy {
        var copy = StoreCopy()
        copy.account = account
        copy.apply([], revision: 0, initial: true)
        return copy
    }

    @Test func aStoreWithNoCopyYetHasNotHadItsFirstDownload() {
        // The race a scenario lost: an app opened the store, the agent had
        // not written the copy yet, and the step after wait-cloud killed it.
        let found = CloudRig.unsettled(device: "iPad", store: "com.example.notes", account: "alice", copy: nil)
        #expect(found == "iPad has not had its first download of com.example.notes")
    }

    @Test func aCopyWrittenByAnAppBeforeTheFirstDownloadIsNotSettled() {
        var copy = StoreCopy()
        copy.account = "alice"
        copy.write(.string("queued"), forKey: "k", device: "iPad", time: 1)
        copy.pending = [:]
        #expect(CloudRig.unsettled(device: "iPad", store: "s", account: "alice", copy: copy) == "iPad has not had its first download of s")
    }

    @Test func pendingUploadsAndAnotherAccountAreNotSettled() {
        var pending = settledCopy()
        pending.write(.string("v"), forKey: "k", device: "iPad", time: 1)
        #expect(CloudRig.unsettled(device: "iPad", store: "s", account: "alice", copy: pending)?.contains("to upload") == true)
        #expect(CloudRig.unsettled(device: "iPad", store: "s", account: "bob", copy: settledCopy()) == "iPad has not switched s to bob yet")
    }

    @Test func aCopyStillGivingBackAfterAResetIsNotSettled() {
        var copy = settledCopy()
        copy.apply(
            [CloudRecord(key: "k", value: 1, stamp: ChangeStamp(time: 1, device: "iPhone", sequence: 1), revision: 1)], revision: 1, initial: false)
        copy.reset(to: [], revision: 0, generation: "new")
        #expect(
            CloudRig.unsettled(device: "iPad", store: "s", account: "alice", copy: copy)
                == "iPad still has 1 key(s) of s to give back to the cloud after a reset")
    }

    @Test func aCopyAfterItsFirstDownloadWithNothingToUploadIsSettled() {
        #expect(CloudRig.unsettled(device: "iPad", store: "s", account: "alice", copy: settledCopy()) == nil)
    }
}
