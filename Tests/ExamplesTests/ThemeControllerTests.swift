import Foundation
import TestSupport
import Testing
import XCTest

@testable import SettingsExamples

/// The theme controller's own unit test, as its original: a cleared suite
/// named after the test's file and function (a name with a '/').
class ThemeControllerTests: XCTestCase {
    override func setUp() {
        ExampleProcess.start()
    }

    func testChangingTheme() {
        let controller = ThemeController(defaults: .makeClearedInstance())
        XCTAssertEqual(controller.currentTheme, .light)

        controller.changeTheme(to: .dark)
        XCTAssertEqual(controller.currentTheme, .dark)
    }

    /// Run twice: the second run starts from a cleared suite, not from the first's dark.
    func testChangingThemeAgainStartsCleared() {
        for _ in 0..<2 {
            let controller = ThemeController(defaults: .makeClearedInstance())
            XCTAssertEqual(controller.currentTheme, .light)
            controller.changeTheme(to: .black)
        }
    }
}

/// The same controller in real processes: a theme shared through the
/// group's suite, and a launch argument as a UI test would pass it
/// (`app.launchArguments = ["-theme", "dark"]`; XCUIApplication does not exist
/// on Linux, `groupsim exec … -- tool -theme dark` is the same launch).
@Suite struct ThemeControllerProcessTests {
    @Test func theGroupSuiteCarriesTheThemeToTheWidget() throws {
        let root = try rootWithExampleApp()
        #expect(try ExampleRun(["theme-group-show"], target: "widget", root: root)["theme"] == "light")
        #expect(try ExampleRun(["theme-change", "dark"], root: root)["theme"] == "dark")
        #expect(try ExampleRun(["theme-group-show"], target: "widget", root: root)["theme"] == "dark")
    }

    @Test func aLaunchArgumentOverridesWithoutPersisting() throws {
        let root = try rootWithExampleApp()
        let launched = try ExampleRun(["theme-show", "-theme", "dark"], root: root)
        #expect(launched.status == 0, "\(launched.stderr)")
        #expect(launched["theme"] == "dark")
        #expect(try ExampleRun(["theme-show"], root: root)["theme"] == "light")
        // `-verbose -theme black`: -verbose takes no value, -theme still counts.
        #expect(try ExampleRun(["theme-show", "-verbose", "-theme", "black"], root: root)["theme"] == "black")
    }

    @Test func theAppsOwnValueOverridesTheAddedSuite() throws {
        let root = try rootWithExampleApp()
        _ = try ExampleRun(["theme-change", "dark"], root: root)
        #expect(try ExampleRun(["theme-combined-show"], root: root)["theme"] == "dark")
        let write = try groupsim(["defaults", "write", "com.example.notes", "theme", "black"], root: root)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(try ExampleRun(["theme-combined-show"], root: root)["theme"] == "black")
    }
}
