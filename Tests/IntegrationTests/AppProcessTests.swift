import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// main-app, widget and intent-extension started for real and driven through the control protocol.
@Suite struct AppProcessTests {
    let root = TemporaryRoot()

    /// A manifest file in the test's root.
    func manifest(_ yaml: String) throws -> String {
        let path = root.path + "/manifest-\(UUID().uuidString).yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let sharedApp = """
        name: Test
        targets:
          main-app:
            bundle-id: com.example.test
            app-groups: [group.com.example.test]
            registered-defaults: { fontSize: 14 }
          widget:
            bundle-id: com.example.test.widget
            app-groups: [group.com.example.test]
            shows: [theme, count]
            timeline: TIMELINE
          intent-extension:
            bundle-id: com.example.test.intents
            app-groups: [group.com.example.test]
            intents:
              Count: { increment: count }
              SetTheme: { set: theme, parameter: theme }
        """

    func app(timeline: String = "on-change") throws -> String {
        try manifest(Self.sharedApp.replacingOccurrences(of: "TIMELINE", with: timeline))
    }

    @Test func startsReadyAnswersCommandsEmitsEventsAndExits() throws {
        let main = try AppProcess("main-app", root: root, manifest: try app())
        #expect(main.ready["bundleId"] == "com.example.test")
        #expect(main.readyLine?.fields["protocol"] == .integer(Int64(ControlProtocol.version)))

        try main.set("theme", "dark")
        try main.change("theme") { $0 == "dark" }
        try main.event { if case .notification = $0 { true } else { false } }
        #expect(try main.get("theme") == ("dark", "group.com.example.test"))
        #expect(try main.get("fontSize") == (14, "NSRegistrationDomain"))
        let count = try main.request(.increment(key: "count", by: 2))
        #expect(count.value == 2)
        let dump = try main.request(.dump)
        let values = try #require(dump.fields["values"]?.dictionaryValue)
        #expect(values["theme"]?.dictionaryValue?["domain"] == "group.com.example.test")
        #expect(values["fontSize"]?.dictionaryValue?["domain"] == "NSRegistrationDomain")

        let bye = try main.request(.exit(status: 3))
        #expect(bye.ok)
        #expect(try main.exitEvent() == 3)
        #expect(try main.waitForExit() == 3)
    }

    @Test func closingStdinEndsTheProcessCleanlyAndCommits() throws {
        // Background commits held: the value is only pending until the process ends.
        let main = try AppProcess("main-app", root: root, manifest: try app(), environment: ["GROUPSIM_DEFER_COMMITS": "1"])
        try main.set("last", "words")
        #expect(!FileManager.default.fileExists(atPath: root.groupSuitePath("group.com.example.test")))
        main.closeInput()
        #expect(try main.exitEvent() == 0)
        #expect(try main.waitForExit() == 0)
        let file = try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath("group.com.example.test"))))
        #expect(file["last"] == "words")
    }

    @Test func malformedRequestsGetErrorsAndTheProcessKeepsRunning() throws {
        let main = try AppProcess("main-app", root: root, manifest: try app())
        for line in [
            "not json", "[1, 2]", "{\"id\": 9}", "{\"id\": 10, \"cmd\": \"fly\"}", "{\"id\": 11, \"cmd\": \"get\"}",
            "{\"id\": 12, \"cmd\": \"set\", \"key\": \"k\", \"value\": null}",
            "{\"id\": 13, \"cmd\": \"increment\", \"key\": \"n\", \"by\": \"lots\"}",
            "{\"id\": 14, \"cmd\": \"increment\", \"key\": \"n\", \"by\": 1.9}",
            "{\"id\": 15, \"cmd\": \"exit\", \"status\": true}",
        ] {
            let response = try main.send(raw: line)
            #expect(!response.ok, "\(line)")
            #expect(response.error?.isEmpty == false)
        }
        let wrongType = try main.send(raw: #"{"id": 16, "cmd": "set", "key": "d", "value": {"$date": "yesterday"}}"#)
        #expect(wrongType.error?.contains("$date") == true)
        #expect(try main.request(.ping).ok)
    }

    /// A line longer than the limit (twice the largest plist file) is refused
    /// with `"id":null` and skipped up to its newline; what follows is answered.
    @Test func anOverlongRequestLineIsRefusedAndTheProcessGoesOn() throws {
        let main = try AppProcess("main-app", root: root)
        var line = Data(#"{"id":1,"cmd":"set","key":"k","value":""#.utf8)
        line.append(Data(repeating: 0x78, count: LineSplitter.defaultMaximumLineBytes))
        line.append(Data(#""}"#.utf8 + [0x0A]))
        #expect(main.process.write(bytes: line))
        let refusal = try main.send(raw: ControlProtocol.requestLine(id: 2, .get(key: "k")))
        #expect(refusal.fields["id"] == nil)
        #expect(refusal.error == LineSplitter.refusal(maximumLineBytes: LineSplitter.defaultMaximumLineBytes))
        let next = try main.response(id: .integer(2))
        #expect(next.ok && next.value == nil)
        #expect(try main.request(.ping).ok)
    }

    /// `search-list` answers the list as it is now: a suite added comes just
    /// below the process's own (the list in `ready` is as it was at start).
    /// A key over the iCloud store's 64 bytes ends the app as Apple's
    /// exception does: an error event, the system's line, SIGABRT.
    @Test func anICloudKeyOverSixtyFourBytesEndsTheProcessAsAppleDoes() throws {
        let app = try AppProcess("main-app", root: root, environment: ["GROUPSIM_CLOUD_AUTOSTART": "0"])
        let key = String(repeating: "é", count: 33)  // 66 bytes of UTF-8, 33 characters
        #expect(try app.request(.cloudSet(key: String(repeating: "k", count: 64), value: "fits")).error == nil)
        _ = app.send(.cloudSet(key: key, value: "too long"))
        let error = try app.event { if case .error = $0 { true } else { false } }
        guard case .error(let message) = error else {
            Issue.record("expected the app's error event, got \(error)")
            return
        }
        #expect(message == "uncaught NSInvalidArgumentException: NSUbiquitousKeyValueStore: key '\(key)' is too long.")
        #expect(try app.process.waitForTermination(timeout: 60).shellStatus == 128 + SIGABRT)
        #expect(
            app.process.stderr.contains(
                "*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: 'NSUbiquitousKeyValueStore: key '\(key)' is too long.'"
            ))
    }

    @Test func searchListAnswersTheCurrentList() throws {
        let main = try AppProcess("main-app", root: root)
        #expect(try main.request(.searchList).fields["searchList"] == main.ready["searchList"])
        #expect(try main.request(.addSuite(name: "group.com.example.extra")).ok)
        #expect(
            try main.request(.searchList).fields["searchList"]
                == .array(
                    [
                        "NSArgumentDomain", "group.com.example.notes", "group.com.example.extra", "NSGlobalDomain", "NSLanguagesDomain",
                        "NSRegistrationDomain",
                    ].map { .string($0) }))
    }

    @Test func aProcessWithoutTheGroupEntitlementDoesNotShare() throws {
        let path = try manifest(
            """
            name: Misconfigured
            targets:
              main-app: { bundle-id: com.example.mis, app-groups: [group.com.example.mis] }
              widget: { bundle-id: com.example.mis.widget, suite: group.com.example.mis, shows: [theme] }
            """)
        let main = try AppProcess("main-app", root: root, manifest: path)
        let widget = try AppProcess("widget", root: root, manifest: path)
        let warning = try widget.warning(kind: "missing-entitlement")
        #expect(warning.message.contains("not entitled to app group group.com.example.mis"))

        try main.set("theme", "dark")
        try main.request(.synchronize)
        #expect(try widget.get("theme").value == nil)
        try widget.set("theme", "from-widget")
        try widget.request(.synchronize)
        #expect(try main.get("theme").value == "dark")
        // What is on disk decides what each can ever see: the group file has
        // only the app's value, the widget's private copy only its own.
        let privateCopy = root.appDomainPath("com.example.mis.widget", domain: "group.com.example.mis")
        #expect(try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: privateCopy))) == ["theme": "from-widget"])
        #expect(
            try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath("group.com.example.mis")))) == [
                "theme": "dark"
            ])
    }

    @Test func theStandardDomainWhereTheSuiteWasMeantIsNotShared() throws {
        let path = try manifest(
            """
            name: Standard
            targets:
              main-app: { bundle-id: com.example.std, app-groups: [group.com.example.std], suite: standard }
              widget: { bundle-id: com.example.std.widget, app-groups: [group.com.example.std], shows: [theme] }
            """)
        let main = try AppProcess("main-app", root: root, manifest: path)
        let widget = try AppProcess("widget", root: root, manifest: path)
        try main.set("theme", "dark")
        try main.request(.synchronize)
        #expect(try main.get("theme") == ("dark", "com.example.std"))
        #expect(try widget.get("theme").value == nil)
        // On disk: the app's own domain has it, the group suite does not exist.
        #expect(
            try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.appDomainPath("com.example.std"))))["theme"] == "dark")
        #expect(!FileManager.default.fileExists(atPath: root.groupSuitePath("group.com.example.std")))
    }

    @Test func aLaunchArgumentOverridesForItsOwnProcessOnly() throws {
        let path = try app()
        let main = try AppProcess("main-app", root: root, manifest: path, launchArguments: ["-theme", "dark", "-count", "5"])
        let widget = try AppProcess("widget", root: root, manifest: path)
        try widget.set("theme", "light")
        try widget.set("marker", "after-theme")
        try widget.request(.synchronize)
        // Once the app has the widget's later write, it has the theme too;
        // its launch argument still wins in its own process.
        try main.change("marker") { $0 == "after-theme" }
        #expect(try main.get("theme") == ("dark", "NSArgumentDomain"))
        #expect(try widget.get("theme") == ("light", "group.com.example.test"))
        #expect(try main.get("count").value == "5")
        #expect(try widget.get("count").value == nil)
    }

    @Test func registeredDefaultsStayInTheirProcess() throws {
        let path = try app()
        let main = try AppProcess("main-app", root: root, manifest: path)
        let widget = try AppProcess("widget", root: root, manifest: path)
        #expect(try main.get("fontSize") == (14, "NSRegistrationDomain"))
        #expect(try widget.get("fontSize").value == nil)
        try main.request(.register(defaults: ["extra": true]))
        #expect(try main.get("extra").value == true)
        #expect(try widget.get("extra").value == nil)
    }

    @Test func aWidgetWithAManualTimelineIsStaleUntilReloaded() throws {
        let path = try app(timeline: "manual")
        let widget = try AppProcess("widget", root: root, manifest: path)
        #expect(try widget.render(reason: "initial")["theme"] == .some(nil))
        let main = try AppProcess("main-app", root: root, manifest: path)
        try main.set("theme", "dark")
        // The widget's process sees the change, but its card does not. A later
        // change not on the card comes after anything the first one caused.
        try widget.change("theme") { $0 == "dark" }
        try main.set("unshown", "marker")
        try widget.change("unshown") { $0 == "marker" }
        #expect(!widget.unconsumed.contains { if case .event(.render, _) = $0 { true } else { false } })
        try widget.request(.reloadTimeline)
        #expect(try widget.render(reason: "request")["theme"] == "dark")
        // The app asking WidgetCenter reloads it too.
        try main.set("theme", "black")
        try widget.change("theme") { $0 == "black" }
        try main.request(.reloadWidgets)
        #expect(try widget.render(reason: "reload-request")["theme"] == "black")
    }

    @Test func anIntentsOneShotWriteReachesTheRunningAppAndWidget() throws {
        let path = try app()
        let main = try AppProcess("main-app", root: root, manifest: path)
        let widget = try AppProcess("widget", root: root, manifest: path)
        _ = try widget.render(reason: "initial")
        let intent = try AppProcess("intent-extension", root: root, manifest: path, arguments: ["Count"])
        let result = try intent.event { if case .intentResult = $0 { true } else { false } }
        #expect(result == .intentResult(intent: "Count", key: "count", value: 1))
        #expect(try intent.waitForExit() == 0)
        try main.change("count") { $0 == 1 }
        #expect(try widget.render(reason: "change")["count"] == 1)
    }

    @Test func aFailingIntentSaysWhyAndExitsWithStatusOne() throws {
        let path = try app()
        let unknown = try AppProcess("intent-extension", root: root, manifest: path, arguments: ["Fly"])
        let error = try unknown.event { if case .error = $0 { true } else { false } }
        guard case .error(let message) = error else {
            Issue.record("expected an error event, got \(error)")
            return
        }
        #expect(message.contains("unknown intent 'Fly'"))
        #expect(try unknown.waitForExit() == 1)
        let missing = try AppProcess("intent-extension", root: root, manifest: path, arguments: ["SetTheme"])
        #expect(try missing.waitForExit() == 1)
    }

    @Test func aBadManifestIsRejectedWithFileAndLine() throws {
        let path = try manifest(
            """
            name: Broken
            targets:
              main-app:
                bundle-id: com.example.broken
                app-group: [group.com.example.broken]
            """)
        let result = try runProcess(BuiltExecutable.path("main-app"), ["--json", "--manifest", path], environment: ["GROUPSIM_ROOT": root.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("\(path):5:"))
        #expect(result.stdout.contains("unknown key 'app-group'"))
    }
}

@Suite struct AppLifecycleTests {
    let root = TemporaryRoot()

    @Test func sigtermCommitsPendingChangesAndSaysGoodbye() throws {
        for round in 0..<5 {
            // Background commits held: the value is only pending when the signal comes.
            let main = try AppProcess("main-app", root: root, environment: ["GROUPSIM_DEFER_COMMITS": "1"])
            try main.set("round", .integer(Int64(round)))
            let before = try? PropertyListFormat.decodeDictionary(
                Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath("group.com.example.notes"))))
            #expect(before?["round"] != .integer(Int64(round)))
            main.process.signal(SIGTERM)
            #expect(try main.exitEvent() == 143)
            #expect(try main.waitForExit() == 143)
            let file = try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath("group.com.example.notes"))))
            #expect(file["round"] == .integer(Int64(round)))
        }
    }

    @Test func exitingWithAChangeThatCannotBeSavedIsAFailure() throws {
        // Background commits held: the value is only pending when the folder goes.
        let main = try AppProcess("main-app", root: root, environment: ["GROUPSIM_DEFER_COMMITS": "1"])
        try main.set("theme", "dark")
        // A plain file now stands where the suite's folder was: no commit can succeed.
        let preferences = (root.groupSuitePath("group.com.example.notes") as NSString).deletingLastPathComponent
        try FileManager.default.removeItem(atPath: preferences)
        #expect(FileManager.default.createFile(atPath: preferences, contents: Data("not a folder".utf8)))
        main.closeInput()
        try main.event { if case .warning(_, let message) = $0 { message.contains("group.com.example.notes") } else { false } }
        #expect(try main.exitEvent() == 74)
        #expect(try main.waitForExit() == 74)
    }

    @Test func devicesAndAppsAreManagedLikeSimulators() throws {
        #expect(try groupsim(["device", "create", "iPad"], root: root).status == 0)
        #expect(try groupsim(["device", "create", "iPad"], root: root).stderr.contains("already exists"))
        #expect(try groupsim(["app", "install", "--device", "iPad"], root: root).trimmedOutput == "installed Notes on iPad")
        let apps = try groupsim(["app", "list", "--device", "iPad"], root: root).stdout
        #expect(apps.contains("com.example.notes  Notes"))
        #expect(apps.contains("widget            com.example.notes.widget"))
        let devices = try groupsim(["device", "list"], root: root).stdout
        #expect(devices.contains("iPad"))
        #expect(devices.contains("group  group.com.example.notes"))
        _ = try groupsim(["defaults", "write", "--device", "iPad", "group.com.example.notes", "k", "v"], root: root)
        #expect(try groupsim(["device", "erase", "iPad"], root: root).status == 0)
        #expect(try groupsim(["defaults", "read", "--device", "iPad", "group.com.example.notes"], root: root).status != 0)
        #expect(try groupsim(["device", "list"], root: root).stdout.contains("iPad"))
        #expect(try groupsim(["device", "delete", "iPad"], root: root).status == 0)
        #expect(try groupsim(["device", "erase", "iPad"], root: root).stderr.contains("no device named iPad"))
    }
}
