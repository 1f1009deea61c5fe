import GroupDefaults
import SimulatedFoundation
import TestSupport
import Testing

/// An observation lives as long as its token, whatever became of the
/// instance it was made through (as on Apple platforms).
@Suite struct ObservationLifetimeTests {
    /// `GroupSim.observe(UserDefaults(suiteName:)!, …)`: the instance is gone at once,
    /// the observation is not; this process's changes and another process's
    /// reach it until the token goes.
    @Test func anObservationMadeThroughATemporaryInstanceLivesAsLongAsItsToken() throws {
        let f = FaceFixture()
        let process = f.process()
        let received = Received()
        var token: GroupSim.Observation? = GroupSim.observe(try #require(GroupSim.defaults(suiteName: f.group, of: process)), "theme") {
            received.add($0)
        }
        try #require(GroupSim.defaults(suiteName: f.group, of: process)).set("dark", forKey: "theme")
        #expect(received.all.count == 1, "this process's change, before set returned")

        let write = try groupsim(["defaults", "write", f.group, "theme", "light"], root: f.root)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(received.wait(for: 2), "another process's change")
        #expect(received.all.last?.newValue as? String == "light")
        #expect(received.all.last?.isFromAnotherProcess == true)

        withExtendedLifetime(token) {}
        token = nil
        try #require(GroupSim.defaults(suiteName: f.group, of: process)).set("black", forKey: "theme")
        #expect(received.all.count == 2, "the token is gone: nobody is told")
    }

    /// A computed `static var shared` that makes a new instance at each use.
    @Test func aComputedSharedInstanceObservesAsLongAsItsToken() throws {
        let f = FaceFixture()
        SharedSuite.process = f.process()
        SharedSuite.group = f.group
        let received = Received()
        let token = GroupSim.observe(UserDefaults.sharedForTest, "count") { received.add($0) }
        UserDefaults.sharedForTest.set(3, forKey: "count")
        #expect(received.all.map { $0.newValue as? Int } == [3])
        withExtendedLifetime(token) {}
    }
}

private enum SharedSuite {
    nonisolated(unsafe) static var process: SimulatedProcess?
    nonisolated(unsafe) static var group = ""
}

extension UserDefaults {
    fileprivate static var sharedForTest: UserDefaults {
        GroupSim.defaults(suiteName: SharedSuite.group, of: SharedSuite.process!)!
    }
}
