import Foundation
import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// Protected data before the first unlock through the Foundation face:
/// what `UserDefaults` reads while the device is locked, and UIKit's check and notification.
@Suite struct ProtectedDataFaceTests {
    let fixture = FaceFixture()
    var root: SimulationRoot { SimulationRoot(path: fixture.root.path) }
    var files: DomainFiles { DomainFiles(root: root, device: "iPhone") }

    @Test func aSuiteOpenedLockedReadsAsAbsentAndWritesOnlyItsKeys() throws {
        // What the user had, written before the reboot (by another process).
        _ = try files.update(fixture.group) {
            $0["lockedFaceStreak"] = 41
            $0["lockedFaceTheme"] = "dark"
        }
        try ProtectedData.set(root: root, device: "iPhone", locked: true, protection: .untilFirstUnlock)

        let process = fixture.process("com.example.prewarmed")
        #expect(!GroupSim.application(of: process).isProtectedDataAvailable)
        let locked = try #require(GroupSim.defaults(suiteName: fixture.group, of: process))
        locked.register(defaults: ["lockedFaceTheme": "light"])
        #expect(locked.object(forKey: "lockedFaceStreak") == nil)
        // Registered defaults still apply.
        #expect(locked.string(forKey: "lockedFaceTheme") == "light")
        locked.set(locked.integer(forKey: "lockedFaceStreak") + 1, forKey: "lockedFaceStreak")
        #expect(locked.synchronize())
        try ProtectedData.set(root: root, device: "iPhone", locked: false)
        // The view stays what it read until the process is relaunched.
        #expect(locked.string(forKey: "lockedFaceTheme") == "light")

        let file = try #require(try files.read(fixture.group))
        #expect(file["lockedFaceStreak"] == 1)
        #expect(file["lockedFaceTheme"] == "dark")
    }

    @Test func theNotificationIsPostedAtTheUnlock() throws {
        try ProtectedData.set(root: root, device: "iPhone", locked: true, protection: .untilFirstUnlock)
        let application = GroupSim.application(of: fixture.process())
        #expect(!application.isProtectedDataAvailable)
        let posted = DispatchSemaphore(value: 0)
        let token = NotificationCenter.default.addObserver(
            forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: application, queue: nil
        ) { _ in posted.signal() }
        defer { NotificationCenter.default.removeObserver(token) }
        try ProtectedData.set(root: root, device: "iPhone", locked: false)
        #expect(posted.wait(timeout: .now() + 10) == .success)
        #expect(application.isProtectedDataAvailable)
    }

    @Test func aToolReadsTheFilesWhateverTheLock() throws {
        _ = try files.update(fixture.group) { $0["lockedToolStreak"] = 41 }
        try ProtectedData.set(root: root, device: "iPhone", locked: true, protection: .untilFirstUnlock)
        // groupsim defaults watch opens its domain so: it looks at the device from outside.
        #expect(try files.defaults(for: fixture.group).value(forKey: "lockedToolStreak") == 41)
    }

    @Test func noProtectionHidesNothing() throws {
        try ProtectedData.set(root: root, device: "iPhone", locked: true, protection: ProtectedData.Protection.none)
        #expect(GroupSim.application(of: fixture.process()).isProtectedDataAvailable)
    }
}
