import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// `groupsim device managed` changing the managed file while real app
/// processes run: their observers are told, their reads answer from it.
@Suite struct ManagedProcessTests {
    let root = TemporaryRoot()

    func managed(_ words: [String]) throws -> ProcessResult {
        try groupsim(["device", "managed", "iPhone", "--app", "com.example.notes"] + words, root: root)
    }

    @Test func theCommandLinesChangeReachesTheRunningAppsObserver() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let app = try AppProcess("main-app", root: root)
        let widget = try AppProcess("widget", root: root)
        try app.set("theme", "light")

        #expect(try managed(["set", "theme", "dark"]).status == 0)
        let forced = try app.change("theme") { $0 == "dark" }
        #expect(forced.origin == "other-process")
        #expect(forced.valueDomain == "NSManagedDomain")
        // The app's own write is kept but not read back; the widget, another bundle, is not managed.
        try app.set("theme", "blue")
        #expect(try app.get("theme") == ("dark", "NSManagedDomain"))
        #expect(try widget.change("theme") { $0 == "blue" }.valueDomain == "group.com.example.notes")

        #expect(try managed(["config", #"{"server":"https://mdm.example.com","seats":5}"#]).status == 0)
        let configuration: PlistValue = ["server": "https://mdm.example.com", "seats": 5]
        try app.change("com.apple.configuration.managed") { $0 == configuration }
        let shown = try managed(["show"])
        #expect(shown.stdout.contains(#""theme":"dark""#), "\(shown.stdout)")
        #expect(shown.stdout.contains("mdm.example.com"), "\(shown.stdout)")

        #expect(try managed(["remove", "theme"]).status == 0)
        #expect(try app.change("theme") { $0 == "blue" }.valueDomain == "group.com.example.notes")
    }

    @Test func badInputIsRefusedAndNothingIsLost() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        #expect(try managed(["set", "seats", "-int", "5"]).status == 0)
        let typo = try managed(["sett", "k", "v"])
        #expect(typo.status != 0)
        #expect(typo.stderr.contains("did you mean set?"), "\(typo.stderr)")
        let app = try groupsim(["device", "managed", "iPhone", "--app", "com.example.note", "set", "k", "v"], root: root)
        #expect(app.stderr.contains("did you mean com.example.notes?"), "\(app.stderr)")
        let device = try groupsim(["device", "managed", "iPhon", "--app", "com.example.notes", "show"], root: root)
        #expect(device.stderr.contains("did you mean iPhone?") || device.stderr.contains("no device named iPhon"), "\(device.stderr)")
        let notAnObject = try managed(["config", "[1, 2]"])
        #expect(notAnObject.stderr.contains("a dictionary (a JSON object), found an array"), "\(notAnObject.stderr)")
        let notJSON = try managed(["config", "{server:"])
        #expect(notJSON.stderr.contains("not valid JSON"), "\(notJSON.stderr)")
        let forcedConfiguration = try managed(["set", "com.apple.configuration.managed", "text"])
        #expect(forcedConfiguration.stderr.contains("not a dictionary"), "\(forcedConfiguration.stderr)")
        // Every refusal left the file as it was.
        #expect(try managed(["show"]).trimmedOutput == #"{"seats":5}"#)
    }
}
