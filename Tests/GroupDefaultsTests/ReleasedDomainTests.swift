import Foundation
import PropertyList
import SharedFiles
import TestSupport
import Testing

@testable import GroupDefaults

/// A domain whose last user lets go of it while its change is still being
/// saved: whatever the interleaving of the release and the commit, a read or
/// a reopening right after finds the change, and a later change is never
/// overwritten by the earlier one.
@Suite struct ReleasedDomainTests {
    static let rounds = 2000

    @Test func aDomainSetAndReleasedIsReadBackAtOnce() throws {
        let f = Fixture()
        let defaults = try f.standard()
        for round in 0..<Self.rounds {
            try defaults.setPersistentDomain(["round": .integer(Int64(round))], forName: "com.example.released")
            let read = try defaults.persistentDomain(forName: "com.example.released")
            #expect(read == ["round": .integer(Int64(round))], "round \(round)")
            if read != ["round": .integer(Int64(round))] { break }
        }
    }

    @Test func aSuiteReopenedAtOnceSeesItsLastChangeAndKeepsTheNext() throws {
        let f = Fixture()
        for round in 0..<Self.rounds {
            let reopened = try GroupDefaults(suiteName: "com.example.reopened", context: f.context(groups: nil), processDomains: f.process)
            let seen = reopened.integer(forKey: "round")
            #expect(seen == round, "round \(round): the change of the instance released just before is missing")
            reopened.set(.integer(Int64(round + 1)), forKey: "round")
            if seen != round { break }
        }
        // What exiting does: save every domain still open, then every hand-off.
        DomainRegistry.shared.synchronizeAll()
        PersistentDomain.waitForReleasedCommits()
        let path = try f.context(groups: nil).locate("com.example.reopened").path
        #expect(try SharedPlistFile.read(path: path)?["round"] == .integer(Int64(Self.rounds)))
    }
}
