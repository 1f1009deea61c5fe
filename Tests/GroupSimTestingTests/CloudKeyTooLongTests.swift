import Foundation
import GroupSimTesting
import Testing

/// A test's `setInCloud` stands for the app's own call: a key over the iCloud store's 64 bytes ends the program as
/// the program's own call does (Apple's store raises NSInvalidArgumentException, which no Swift code can catch).
@Suite struct CloudKeyTooLongTests {
    static func terminating(_ key: String) -> String {
        "*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: 'NSUbiquitousKeyValueStore: key '\(key)' is too long.'"
    }

    @Test func aKeyOverSixtyFourBytesEndsTheProgramAsItsOwnCallDoes() async throws {
        let simulation = try Simulation()
        defer {
            simulation.finish()
            try? FileManager.default.removeItem(atPath: simulation.root)
        }
        try simulation.install(.example)
        // The program's own call: the mirror copies a 65-byte key into the store.
        let own = try await simulation.launch("settings-examples", arguments: ["cloud-mirror-long-key"])
        let ownStatus = try await own.waitForExit(timeout: .seconds(30))
        #expect(own.standardErrorLines.contains(Self.terminating("sync-" + String(repeating: "x", count: 60))), "\(own.standardErrorLines)")

        let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
        try await app.setInCloud(String(repeating: "k", count: 64), "fits")
        let key = String(repeating: "é", count: 33)  // 66 bytes of UTF-8, 33 characters
        let line = #line + 1
        let failure = await #expect(throws: Failure.self) { try await app.setInCloud(key, "too long") }
        #expect(failure?.place.line == line)
        #expect(failure?.message.contains("ended before it answered") == true, "\(failure?.message ?? "")")
        #expect(try await app.waitForExit(status: ownStatus, timeout: .seconds(30)) == 134)
        #expect(app.standardErrorLines.contains(Self.terminating(key)), "\(app.standardErrorLines)")
    }
}
