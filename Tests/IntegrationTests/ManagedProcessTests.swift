import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// `groupsim device managed` changing the managed file while real app
/// processes run: their observers are told, their reads answer from it.
@Suite struct ManagedProcessTests {
    let root = TemporaryRoot()

    /// `domain`: whose managed preferences, the app's (its bundle id) or an app group's (its suite's).
    func managed(_ words: [String], domain: String = "com.example.notes") throws -> ProcessResult {
        try groupsim(["device", "managed", "iPhone", "--app", domain] + words, root: root)
    }

    @Test func theCommandLinesChangeReachesTheRunningAppsObserver() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let app = try AppProcess("main-app", root: root)
        let widget = try AppProcess("widget", root: root)
        try app.set("theme", "light")

        // The built-in roles read the app group's suite: the app's own bundle forcing theme does not reach it.
        #expect(try managed(["set", "theme", "dark"]).status == 0)
        #expect(try managed(["set", "theme", "dark"], domain: "group.com.example.notes").status == 0)
        let forced = try app.change("theme") { $0 == "dark" }
        #expect(forced.origin == "other-process")
        #expect(forced.valueDomain == "NSManagedDomain")
        // The app's own write is kept but not read back; the widget reads the same suite, forced for it too.
        try app.set("theme", "blue")
        #expect(try app.get("theme") == ("dark", "NSManagedDomain"))
        #expect(try widget.change("theme") { $0 == "dark" }.valueDomain == "NSManagedDomain")
        #expect(try app.request(.forced(key: "theme", domain: nil)).value == true)
        #expect(try app.request(.forced(key: "theme", domain: "com.example.notes")).value == true)

        #expect(try managed(["config", #"{"server":"https://mdm.example.com","seats":5}"#]).status == 0)
        let shown = try managed(["show"])
        #expect(shown.stdout.contains(#""theme":"dark""#), "\(shown.stdout)")
        #expect(shown.stdout.contains("mdm.example.com"), "\(shown.stdout)")

        #expect(try managed(["remove", "theme"], domain: "group.com.example.notes").status == 0)
        #expect(try app.change("theme") { $0 == "blue" }.valueDomain == "group.com.example.notes")
        #expect(try app.request(.forced(key: "theme", domain: nil)).value == false)
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
