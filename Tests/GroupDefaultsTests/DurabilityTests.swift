import Foundation
import PropertyList
import SharedFiles
import TestSupport
import Testing

@testable import GroupDefaults

/// The root's durability setting: where it is kept, what it makes a commit
/// do, and a setting nobody could have written.
@Suite struct DurabilityTests {
    @Test func aNewRootIsDurableAndTheSettingIsKeptInTheRoot() throws {
        let f = Fixture()
        let root = SimulationRoot(path: f.root.path)
        #expect(try root.durability() == .durable)
        #expect(try f.standard().own.file.durable)

        try root.setDurability(.process)
        #expect(try root.durability() == .process)
        let settings = try SharedPlistFile.read(path: f.root.path + "/settings.plist")
        #expect(settings == ["durability": "process"])
        // Domains opened from now on commit without fsync; they still commit.
        let suite = try f.suite()
        #expect(!suite.own.file.durable)
        suite.set("kept", forKey: "k")
        try suite.flush()
        #expect(try SharedPlistFile.read(path: suite.path)?["k"] == "kept")
        #expect(try !DomainFiles(root: root, device: "iPhone").file(for: f.group).durable, "one-shot tools follow the root too")

        try root.setDurability(.durable)
        #expect(try root.durability() == .durable)
    }

    @Test func aSettingThatIsNoDurabilityIsAnErrorNamingTheFile() throws {
        let f = Fixture()
        let path = f.root.path + "/settings.plist"
        for (written, found) in [(PlistValue.string("fast"), "\"fast\""), (.integer(1), "not a string")] {
            try SharedPlistFile(path: path, root: f.root.path).update { $0["durability"] = written }
            let expected = DefaultsError.badSetting(path: path, key: "durability", found: found, expected: "durable or process")
            #expect(throws: expected) { try SimulationRoot(path: f.root.path).durability() }
            #expect(throws: expected, "no domain opens with a default nobody chose") { try f.standard() }
        }
    }
}
