import Foundation
import PropertyList
import TestSupport
import Testing

/// The commands as a person types them: help is reachable, a bad value says
/// only what is wrong, a destructive prompt command asks first, and
/// uninstalling the last app of a group takes its container.
@Suite struct EverydayCommandTests {
    let root = TemporaryRoot()

    @Test func intentExtensionHelpIsHelpNotAnIntent() throws {
        for flag in ["--help", "-h"] {
            let result = try runBounded(BuiltExecutable.path("intent-extension"), [flag], environment: ["GROUPSIM_ROOT": root.path])
            #expect(result.status == 0, "\(flag): \(result.stderr)")
            #expect(result.stdout.contains("USAGE: intent-extension"), "\(flag): \(result.stdout)")
            #expect(!result.stdout.contains("no intent"), "\(flag)")
        }
    }

    @Test func aBadValueIsReportedAloneWithoutTheGeneralUsage() throws {
        for (flag, value, message) in [("-int", "abc", #"-int expects an integer, got "abc""#), ("-date", "tomorrow", #"-date expects a date"#)] {
            let result = try groupsim(["defaults", "write", "group.com.example.notes", "k", flag, value], root: root)
            #expect(result.status == 64)
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(!result.stderr.contains("Usage:") && !result.stderr.contains("--help"), "\(result.stderr)")
        }
    }

    @Test func clearAtThePromptAsksFirstAndSaysWhatWent() throws {
        let suite = root.groupSuitePath("group.com.example.notes")
        let result = try runBounded(
            BuiltExecutable.path("main-app"), [], environment: ["GROUPSIM_ROOT": root.path, "NO_COLOR": "1"],
            stdin: Data("set kept 1\nclear\nno\nsync\n".utf8))
        #expect(result.stdout.contains("Type yes to go on") && result.stdout.contains("not cleared"), "\(result.stdout)")
        #expect(try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: suite)))["kept"] == .string("1"))
        let confirmed = try runBounded(
            BuiltExecutable.path("main-app"), [], environment: ["GROUPSIM_ROOT": root.path, "NO_COLOR": "1"],
            stdin: Data("clear\nyes\n".utf8))
        #expect(confirmed.stdout.contains("removed 1 key(s) from group.com.example.notes: kept"), "\(confirmed.stdout)")
        #expect(try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: suite)))["kept"] == nil)
    }

    @Test func uninstallingTheLastAppOfAGroupRemovesTheGroupContainer() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        #expect(try groupsim(["defaults", "write", "group.com.example.notes", "theme", "dark"], root: root).status == 0)
        let container = root.path + "/devices/iPhone/Containers/Shared/AppGroup/group.com.example.notes"
        #expect(FileManager.default.fileExists(atPath: container))
        let result = try groupsim(["app", "uninstall", "com.example.notes"], root: root)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: container), "the group's container outlived its last app")
    }
}

extension EverydayCommandTests {
    /// `widget --no-input &` keeps running in the background, whatever its
    /// stdin, prints each render, and ends on SIGTERM like any daemon.
    @Test func aRoleRunsInTheBackgroundWithNoInput() throws {
        let widget = try RunningProcess(BuiltExecutable.path("widget"), ["--no-input", "--root", root.path])
        defer { widget.kill() }
        widget.closeStdin()
        try widget.waitForLine { $0.contains("rendered (initial)") }
        let intent = try runBounded(BuiltExecutable.path("intent-extension"), ["CountNote"], environment: ["GROUPSIM_ROOT": root.path])
        #expect(intent.status == 0, "\(intent.stderr)")
        try widget.waitForLine { $0.contains("noteCount: 1") }
        widget.signal(SIGTERM)
        #expect(try widget.waitForExit(timeout: 10) == 143)
        #expect(!widget.allLines.contains { $0.contains("type 'help'") })
    }
}
