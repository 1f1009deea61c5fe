import Foundation
import TestSupport
import Testing

/// The reading app's settings (initial values, a shared suite, a property
/// wrapper, a cloud mirror), each step a real process of the example app.
@Suite struct ReadingPreferencesTests {
    @Test func registeredDefaultsAndTheSharedSuiteAcrossTargets() throws {
        let root = try rootWithExampleApp()
        let launch = try ExampleRun(["reading-launch"], root: root)
        #expect(launch.status == 0, "\(launch.stderr)")
        #expect(launch["ReadingMode"] == "standard")
        #expect(launch["HighScore"] == "0")
        #expect(launch["SettingsSaved"] == "true")

        // The widget is another process: the app's standard domain and its
        // registered defaults are not its own, and the suite is still empty.
        let widgetBefore = try ExampleRun(["reading-show"], target: "widget", root: root)
        #expect(widgetBefore["ReadingMode"] == "nil")
        #expect(widgetBefore["HighScore"] == "nil")

        #expect(try ExampleRun(["reading-share", "night"], root: root)["ReadingMode"] == "night")
        #expect(try ExampleRun(["reading-show"], target: "widget", root: root)["ReadingMode"] == "night")
        #expect(try ExampleRun(["reading-show"], target: "intent", root: root)["ReadingMode"] == "night")
    }

    /// A key-path observation made through `UserDefaults.shared` (a new
    /// instance at every use) hears the widget's and the intent's changes.
    @Test func anObservationThroughTheComputedSharedSuiteHearsOtherTargets() throws {
        let root = try rootWithExampleApp()
        let watcher = try RunningProcess(
            BuiltExecutable.path("groupsim"),
            ["exec", "--app", "com.example.notes", "--", BuiltExecutable.path("settings-examples"), "reading-watch", "2"],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
        try watcher.waitForLine { $0 == "ready=true" }
        #expect(try ExampleRun(["reading-share", "night"], target: "widget", root: root).status == 0)
        #expect(try watcher.waitForLine { $0.hasPrefix("ReadingMode=") } == "ReadingMode=night")
        #expect(try ExampleRun(["reading-share", "sepia"], target: "intent", root: root).status == 0)
        #expect(try watcher.waitForLine { $0.hasPrefix("ReadingMode=") } == "ReadingMode=sepia")
        #expect(try watcher.waitForExit(timeout: 20) == 0)
    }

    @Test func thePropertyWrapperAndEnumKeysPersistAcrossLaunches() throws {
        let root = try rootWithExampleApp()
        let first = try ExampleRun(["profile"], root: root)
        #expect(first["username"] == "Anonymous")
        #expect(first["highScore"] == "0")
        #expect(try ExampleRun(["profile", "Ann"], root: root)["username"] == "Ann")
        let relaunched = try ExampleRun(["profile"], root: root)
        #expect(relaunched["username"] == "Ann")
        #expect(relaunched["name"] == "Ann")
    }

    /// didChangeNotification reaches the mirror on the writing thread; only
    /// "sync-" keys go to the store, and applying the store's values is not
    /// sent back to it.
    @Test func theCloudMirrorFollowsDidChange() throws {
        let root = try rootWithExampleApp()
        let run = try ExampleRun(["cloud-mirror"], root: root)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run["mirrored"] == "sync-score:42")
        #expect(run["sync-theme"] == "dark")
    }

    /// A prefixed key over the iCloud store's 64 bytes ends the app, as
    /// Apple's store raises an exception Swift cannot catch.
    @Test func aMirroredKeyOverSixtyFourBytesEndsTheApp() throws {
        let root = try rootWithExampleApp()
        let run = try ExampleRun(["cloud-mirror-long-key"], root: root)
        #expect(run.status == SIGABRT, "killed by SIGABRT (a shell shows 134): \(run.stderr)")
        #expect(run["mirroring"] == "started" && run["survived"] == nil)
        #expect(
            run.stderr.contains(
                "*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: 'NSUbiquitousKeyValueStore: key 'sync-"))
        #expect(run.stderr.contains("' is too long.'"))
    }
}
