import Foundation
import GroupSimTesting
import Testing

/// A user's executable (linking SimulatedFoundation) launched before the
/// device's first unlock: it reads nothing, and keeps that view until relaunched.
@Suite struct RebootTests {
    @Test func anExecutableLaunchedBeforeTheFirstUnlockReadsNothingUntilRelaunched() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let before = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            try await before.set("rebootStreak", 41)
            try await before.synchronize()
            try await simulation.rebootDevice("iPhone")
            let locked = try await simulation.restart(before)
            #expect(try await locked.value(forKey: "rebootStreak") == nil)
            try await simulation.unlockDevice("iPhone")
            #expect(try await locked.value(forKey: "rebootStreak") == nil)
            let relaunched = try await simulation.restart(locked)
            #expect(try await relaunched.value(forKey: "rebootStreak") == 41)
        }
    }

    /// A reboot ends the programs running on the device, as the scenario step does; what they wrote is kept.
    @Test func aRebootEndsTheProgramsRunningOnTheDeviceKeepingWhatTheyWrote() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            try await app.set("rebootNote", "milk")
            try await simulation.rebootDevice("iPhone", dataProtectionOff: true)
            #expect(!app.isRunning)
            let after = try await simulation.restart(app)
            #expect(try await after.value(forKey: "rebootNote") == "milk")
        }
    }
}
