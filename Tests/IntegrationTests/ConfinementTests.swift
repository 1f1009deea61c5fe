import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// Nothing is written outside the simulation root, even when a folder is
/// swapped for a symbolic link under a running process.
@Suite struct ConfinementTests {
    let root = TemporaryRoot()
    let group = "group.com.example.notes"

    @Test func aPreferencesFolderSwappedForALinkWhileTheAppRunsReceivesNothing() throws {
        let main = try AppProcess("main-app", root: root)
        try main.set("theme", "dark")
        #expect(try main.request(.synchronize).ok)
        let preferences = (root.groupSuitePath(group) as NSString).deletingLastPathComponent
        let outside = TemporaryRoot()
        #expect(rename(preferences, preferences + ".moved") == 0)
        #expect(symlink(outside.path, preferences) == 0)

        try main.set("theme", "light")
        let warning = try main.warning(kind: "commit-failed")
        let refusal = "'\(preferences)' is a symbolic link; the simulation root must contain real folders"
        #expect(warning.message.contains(refusal))
        let synchronize = try main.request(.synchronize)
        #expect(!synchronize.ok)
        #expect(synchronize.error?.contains(refusal) == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)

        // The change stayed pending: with the real folder back, it is saved.
        #expect(unlink(preferences) == 0)
        #expect(rename(preferences + ".moved", preferences) == 0)
        #expect(try main.request(.synchronize).ok)
        let file = try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath(group))))
        #expect(file["theme"] == "light")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        main.closeInput()
        #expect(try main.waitForExit() == 0)
    }
}
