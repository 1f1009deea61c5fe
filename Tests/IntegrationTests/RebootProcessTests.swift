import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// `groupsim device reboot|unlock` with real processes of every built-in
/// role launched before the first unlock: they read nothing, keep that view,
/// and what they write replaces the user's values of those keys.
@Suite struct RebootProcessTests {
    let root = TemporaryRoot()

    func device(_ words: [String]) throws -> ProcessResult { try groupsim(["device"] + words, root: root) }

    @Test func processesLaunchedBeforeTheFirstUnlockReadNothingAndTheirWriteReplacesTheUsers() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let before = try AppProcess("main-app", root: root)
        try before.set("noteCount", 41)
        try before.set("lastNote", "milk")
        before.closeInput()
        #expect(try before.waitForExit() == 0)

        #expect(try device(["reboot", "iPhone"]).status == 0)
        #expect(try device(["list"]).stdout.contains("state  locked"))
        let app = try AppProcess("main-app", root: root, arguments: ["--prewarm"])
        #expect(app.ready["launch"] == "prewarm")
        #expect(app.ready["protectedData"] == "unavailable")
        #expect(try app.get("noteCount").value == nil)
        // Registered defaults still apply.
        #expect(try app.get("theme").value == "light")
        let widget = try AppProcess("widget", root: root)
        let card = try widget.render(reason: "initial")
        #expect((card["noteCount"] ?? nil) == nil)
        // The intent extension counts from nothing: the user's 41 becomes 1.
        let intent = try AppProcess("intent-extension", root: root, arguments: ["CountNote"])
        #expect(
            try intent.event { if case .intentResult = $0 { true } else { false } } == .intentResult(intent: "CountNote", key: "noteCount", value: 1))
        #expect(try intent.waitForExit() == 0)

        #expect(try device(["unlock", "iPhone"]).status == 0)
        #expect(!(try device(["list"]).stdout.contains("state  locked")))
        // The running app keeps its empty view until it is relaunched.
        #expect(try app.get("lastNote").value == nil)
        let relaunched = try AppProcess("main-app", root: root)
        #expect(relaunched.ready["protectedData"] == nil)
        #expect(try relaunched.get("noteCount").value == 1)
        #expect(try relaunched.get("lastNote").value == "milk")
    }

    /// The trap and its fix as scenarios: the app that waits for the unlock
    /// says ready only after it (a quiet step checks) and reads the user's value.
    @Test func theRebootScenariosPass() throws {
        let tmp = root.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let result = try runBounded(
            BuiltExecutable.path("groupsim"), ["run", FileManager.default.currentDirectoryPath + "/scenarios", "--filter", "reboot-counter"],
            environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(result.status == 0 && result.stdout.contains("scenarios: 2 passed, 0 failed"), "\(result.stdout)\(result.stderr)")
    }

    @Test func badInputIsRefusedNamingIt() throws {
        let typo = try device(["reboot", "iPhon"])
        #expect(typo.status != 0)
        #expect(typo.stderr.contains("no device named iPhon"), "\(typo.stderr)")
        let protection = try device(["reboot", "iPhone", "--protection", "sometimes"])
        #expect(protection.status != 0)
        #expect(protection.stderr.contains("--protection 'sometimes' is not one of until-first-unlock, none"), "\(protection.stderr)")
        let manifest = root.path + "/bad.yaml"
        try "name: Bad\nprotected-data: later\ntargets:\n  main-app: { bundle-id: com.example.bad }\n".write(
            toFile: manifest, atomically: true, encoding: .utf8)
        let bad = try groupsim(["app", "install", "--manifest", manifest], root: root)
        #expect(bad.stderr.contains("bad.yaml:2:"), "\(bad.stderr)")
        #expect(bad.stderr.contains("protected-data must be trust-reads or wait-for-unlock"), "\(bad.stderr)")
    }
}
