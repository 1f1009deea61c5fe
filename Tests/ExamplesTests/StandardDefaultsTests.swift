import SimulatedFoundation
import Testing

/// `UserDefaults.standard` in this test process: the harness's simulated
/// process (ExampleHarness.swift), as the environment would name it.
@Suite struct StandardDefaultsTests {
    @Test func standardIsOneInstanceUntilReset() throws {
        ExampleProcess.start()
        let standard = UserDefaults.standard
        #expect(standard === UserDefaults.standard)
        #expect(GroupSim.groupDefaults(of: standard).domainName == "com.example.notes")
        #expect(GroupSim.groupDefaults(of: UserDefaults()).domainName == "com.example.notes")
        #expect(UserDefaults(suiteName: "com.example.notes") == nil)
        standard.set("kept across the reset", forKey: "standard-reset-check")
        UserDefaults.resetStandardUserDefaults()
        let renewed = UserDefaults.standard
        #expect(renewed !== standard)
        #expect(renewed.string(forKey: "standard-reset-check") == "kept across the reset")
        #expect(renewed.persistentDomain(forName: "com.example.notes")?["standard-reset-check"] as? String == "kept across the reset")
    }
}
