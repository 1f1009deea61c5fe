import Foundation
import TestSupport
import Testing

/// Settings read and written directly, and watched by another process for
/// changes from the app and from the `defaults` tool.
@Suite struct EditorSettingsTests {
    @Test func setAndReadBack() throws {
        let root = try rootWithExampleApp()
        let run = try ExampleRun(["editor-change", "true", "Hello, World!"], root: root)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run["ShowLineNumbers"] == "true")
        #expect(run["TitleString"] == "Hello, World!")
    }

    /// The observer (Apple's key-value observing, registered through an
    /// instance it does not keep) hears a change from another process of the
    /// app and one from the defaults tool, and nothing for a write of the
    /// value the setting already has.
    @Test func anObserverHearsOtherProcessesButNotSameValueWrites() throws {
        let root = try rootWithExampleApp()
        let watcher = try RunningProcess(
            BuiltExecutable.path("groupsim"),
            ["exec", "--app", "com.example.notes", "--", BuiltExecutable.path("settings-examples"), "editor-watch", "2"],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
        try watcher.waitForLine { $0 == "ready=true" }

        let change = try ExampleRun(["editor-change", "true", "Title"], root: root)
        #expect(change.status == 0, "\(change.stderr)")
        let first = try watcher.waitForLine { $0.hasPrefix("Setting changed") }
        #expect(first == "Setting changed: ShowLineNumbers from 0 to 1")

        for value in ["true", "false"] {
            let write = try groupsim(["defaults", "write", "com.example.notes", "ShowLineNumbers", "-bool", value], root: root)
            #expect(write.status == 0, "\(write.stderr)")
        }
        let second = try watcher.waitForLine { $0.hasPrefix("Setting changed") }
        #expect(second == "Setting changed: ShowLineNumbers from 1 to 0", "the same-value write was not reported")
        #expect(try watcher.waitForExit(timeout: 20) == 0)
    }
}
