import Foundation
import TestSupport
import Testing

/// `groupsim run --filter WORD`: a scenario's name, tags and file name (with
/// its folder) are matched, never the folders above the scenario folder.
@Suite struct ScenarioFilterTests {
    let root = TemporaryRoot()

    @Test func theFoldersAboveTheScenariosAreNotMatched() throws {
        let folder = root.path + "/reboot-checkout/scenarios"
        try FileManager.default.createDirectory(atPath: folder + "/cloud", withIntermediateDirectories: true)
        let body = "processes:\n  app: { role: main-app }\nsteps:\n  - launch: app\n"
        try ("summary: tagged\ntags: [reboot]\n" + body).write(toFile: folder + "/tagged.yaml", atomically: true, encoding: .utf8)
        try ("summary: plain\n" + body).write(toFile: folder + "/plain.yaml", atomically: true, encoding: .utf8)
        try ("summary: in a folder\n" + body).write(toFile: folder + "/cloud/synced.yaml", atomically: true, encoding: .utf8)
        func listed(_ filter: String) throws -> String {
            let result = try groupsim(["run", folder, "--list", "--filter", filter], root: root)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout
        }
        let byTag = try listed("reboot")
        #expect(byTag.contains("tagged") && !byTag.contains("plain") && !byTag.contains("synced"), "\(byTag)")
        let byFolder = try listed("cloud/")
        #expect(byFolder.contains("synced") && !byFolder.contains("plain"), "\(byFolder)")
        let byFile = try listed("plain.yaml")
        #expect(byFile.contains("plain") && !byFile.contains("tagged"), "\(byFile)")
    }
}
