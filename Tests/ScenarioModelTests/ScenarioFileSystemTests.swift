import Foundation
import ScenarioModel
import SpecFormat
import Testing

/// The parser asks a `ScenarioFileSystem` for what a scenario names beyond
/// itself; with `FixedScenarioFiles` it parses with nothing on the disk (as
/// the fuzz target does), and words each failure as it does for the disk's.
@Suite struct ScenarioFileSystemTests {
    /// Nothing exists under this folder: whatever is found comes from the fixed file system.
    static let file = "/nonexistent-\(UUID().uuidString)/scenario.yaml"

    static let files = FixedScenarioFiles(
        executables: [
            "./app": .found(path: "/fixed/app", linkage: .links),
            "cat": .found(path: "/fixed/bin/cat", linkage: .doesNotLink),
            "./script": .found(path: "/fixed/script", linkage: .unreadable("no ELF magic number")),
            "./folder": .notRunnable(path: "/fixed/folder"),
        ],
        manifests: [
            (file as NSString).deletingLastPathComponent + "/apps/notes.yaml": """
            name: Notes
            targets:
              main-app: { bundle-id: com.example.notes, app-groups: [group.com.example.notes] }
              widget: { bundle-id: com.example.notes.widget, app-groups: [group.com.example.notes], shows: [theme] }
            """
        ], searchPath: ["/fixed/bin", "/fixed/sbin"])

    func parse(_ text: String) throws -> Scenario {
        try ScenarioParser.parse(text, file: Self.file, fileSystem: Self.files)
    }

    /// The error `text` is refused with: where, and its message.
    func refusal(_ text: String) throws -> (String, String) {
        do {
            _ = try parse(text)
        } catch let error as SpecError {
            return ("\(error.line):\(error.column)", error.message)
        }
        Issue.record("\(text) was accepted")
        return ("", "")
    }

    @Test func executablesAndAManifestComeFromTheFileSystemGiven() throws {
        let scenario = try parse(
            """
            summary: x
            app: apps/notes.yaml
            processes:
              mine: { exec: [./app, --verbose], target: widget }
              copier: { exec: cat }
              script: { exec: ./script, control: true }
            steps:
              - launch: mine
            """)
        #expect(scenario.app.name == "Notes")
        guard case .file(let manifestPath) = scenario.appSource else { throw Failure("the app does not come from a file") }
        #expect(manifestPath.hasSuffix("/apps/notes.yaml"))
        let mine = try #require(scenario.processes["mine"]?.executable)
        #expect(mine.path == "/fixed/app" && mine.arguments == ["--verbose"] && mine.control)
        let copier = try #require(scenario.processes["copier"]?.executable)
        #expect(copier.path == "/fixed/bin/cat" && !copier.control)
        #expect(copier.noControlReason?.contains("'/fixed/bin/cat' does not link SimulatedFoundation") == true)
        // An unreadable file is believed when it says control: true.
        #expect(scenario.processes["script"]?.executable?.control == true)
    }

    @Test func eachFailedLookUpIsRefusedAtTheExecWithItsMessage() throws {
        let refusals = try [
            refusal("summary: x\nprocesses:\n  p: { exec: [nothing-here] }\nsteps: []\n"),
            refusal("summary: x\nprocesses:\n  p: { exec: [./not-built] }\nsteps: []\n"),
            refusal("summary: x\nprocesses:\n  p: { exec: [./folder] }\nsteps: []\n"),
            refusal("summary: x\nprocesses:\n  p: { exec: [cat], control: true }\nsteps: []\n"),
            refusal("summary: x\napp: apps/missing.yaml\nsteps: []\n"),
        ]
        #expect(
            refusals[0]
                == (
                    "3:14",
                    "processes.p.exec: no executable 'nothing-here' among the build's products or on PATH (/fixed/bin:/fixed/sbin); "
                        + "build it (swift build), or give its path (relative to this file)"
                ))
        #expect(refusals[1].0 == "3:14" && refusals[1].1.hasPrefix("processes.p.exec: no executable at './not-built' (exec paths are relative"))
        #expect(
            refusals[2]
                == (
                    "3:14",
                    "processes.p.exec: '/fixed/folder' is not an executable file (a folder, a device, or a file not marked executable: chmod +x)"
                ))
        #expect(
            refusals[3].0 == "3:30"
                && refusals[3].1.hasPrefix("processes.p.control: control: true, but '/fixed/bin/cat' does not link SimulatedFoundation"))
        #expect(refusals[4].0 == "2:6" && refusals[4].1.hasPrefix("app: no app manifest at '/nonexistent-"))
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
