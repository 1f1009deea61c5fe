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

    /// A file that does not load (here, an executable not built) stops a run
    /// only when the filter selects it; one the filter leaves out is said and skipped.
    @Test func aFileTheFilterLeavesOutDoesNotStopTheRunForNotLoading() throws {
        let folder = root.path + "/scenarios"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "summary: fine\nprocesses:\n  app: { role: main-app }\nsteps:\n  - launch: app\n".write(
            toFile: folder + "/fine.yaml", atomically: true, encoding: .utf8)
        try "summary: not built\nprocesses:\n  tool: { exec: [no-such-product-built] }\nsteps:\n  - launch: tool\n".write(
            toFile: folder + "/unbuilt.yaml", atomically: true, encoding: .utf8)
        let filtered = try groupsim(["run", folder, "--filter", "fine"], root: root)
        #expect(filtered.status == 0, "\(filtered.stdout)\(filtered.stderr)")
        #expect(filtered.stderr.contains("skipped (the filter leaves it out):") && filtered.stderr.contains("unbuilt.yaml"), "\(filtered.stderr)")
        let all = try groupsim(["run", folder], root: root)
        #expect(
            all.status == 2 && all.stderr.contains("no executable 'no-such-product-built' among the build's products or on PATH"), "\(all.stderr)")
        let selected = try groupsim(["run", folder, "--filter", "unbuilt"], root: root)
        #expect(selected.status == 2, "\(selected.stderr)")
    }

    /// A bare `exec:` name is first a product of the running build (debug or release alike), then a program on PATH.
    @Test func aBareExecutableNameIsTheRunningBuildsProduct() throws {
        let folder = root.path + "/scenarios"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "summary: a product by name\nprocesses:\n  tool: { exec: [settings-examples, wait-input] }\nsteps:\n  - launch: tool\n  - quit: tool\n"
            .write(
                toFile: folder + "/product.yaml", atomically: true, encoding: .utf8)
        let result = try groupsim(["run", folder], root: root)  // the build folder is not on the tests' PATH
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }
}
