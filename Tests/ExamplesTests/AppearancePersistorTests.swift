import Foundation
import TestSupport
import Testing
import XCTest

@testable import SettingsExamples

/// The persistor's own test, as its original: a mock store injected.
class AppearancePersistorMockTests: XCTestCase {
    func testOmnibarVisibilityThroughTheMock() {
        let mockStore = MockKeyValueStore()
        var persistor = AppearancePreferencesUserDefaultsPersistor(keyValueStore: mockStore)
        persistor.isOmnibarVisible = true
        XCTAssertTrue(persistor.isOmnibarVisible)
        persistor.isOmnibarVisible = false
        XCTAssertFalse(persistor.isOmnibarVisible)
    }
}

/// The same persistors over the app group's suite, in real processes.
@Suite struct AppearancePersistorProcessTests {
    @Test func defaultsUntilSetThenSharedWithTheWidget() throws {
        let root = try rootWithExampleApp()
        let fresh = try ExampleRun(["appearance-show"], target: "widget", root: root)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh["omnibar"] == "true")
        #expect(fresh["report"] == "false")
        #expect(fresh["preferences"] == "")
        #expect(fresh["username"] == "nil")

        let set = try ExampleRun(
            ["appearance-set", "omnibar=false", "report=true", "preference=font:serif", "checked=1700000000", "username=Zoe", "theme=night"],
            root: root)
        #expect(set.status == 0, "\(set.stderr)")
        let widget = try ExampleRun(["appearance-show"], target: "widget", root: root)
        #expect(widget["omnibar"] == "false")
        #expect(widget["report"] == "true")
        #expect(widget["preferences"] == "font:serif")
        #expect(widget["checked"] == "1700000000.0")
        #expect(widget["username"] == "Zoe")
        #expect(widget["theme"] == "night")

        // Optional values: nil removes the key.
        #expect(try ExampleRun(["appearance-set", "username=nil"], root: root)["username"] == "nil")
    }

    /// `as? Bool` reads an integer written by another tool, as NSNumber bridging does.
    @Test func anIntegerFromTheDefaultsToolReadsAsABool() throws {
        let root = try rootWithExampleApp()
        for (value, expected) in [("0", "false"), ("1", "true")] {
            let write = try groupsim(
                ["defaults", "write", "group.com.example.notes", "new-tab-page.omnibar.is-visible", "-int", value], root: root)
            #expect(write.status == 0, "\(write.stderr)")
            #expect(try ExampleRun(["appearance-show"], root: root)["omnibar"] == expected)
        }
    }
}
