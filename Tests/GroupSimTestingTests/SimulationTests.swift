import Foundation
import GroupSimTesting
import Testing

/// GroupSimTesting as a user's Swift Testing suite uses it, with the
/// examples' program `settings-examples` (it links SimulatedFoundation) as
/// the user's executable, run as the example Notes app and its widget.
@Suite struct SimulationTests {
    static let group = "group.com.example.notes"

    /// The widget observes ReadingMode in the group suite (key-path
    /// observation); the app writes it: the widget's observer is told, from
    /// another process, and its own output says so.
    @Test func aWriteInTheAppReachesTheWidgetsObserver() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example, on: "iPhone")
            // `launch` returns once the widget's program says it is ready (after registering its observer).
            let widget = try await simulation.launch("settings-examples", as: .widget, arguments: ["reading-watch", "2"])
            let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])

            try await app.set("ReadingMode", "night", suite: Self.group)
            let delivery = try await widget.waitForChange(key: "ReadingMode", value: "night")
            #expect(delivery.mechanism == .keyPathObservation)
            #expect(delivery.origin == "other-process")
            try await widget.waitForOutput(matching: "^ReadingMode=night$")
            #expect(try await widget.value(forKey: "ReadingMode", suite: Self.group) == "night")
            // The widget's program ends after the second change it waits for.
            try await app.set("ReadingMode", "day", suite: Self.group)
            try await widget.waitForOutput(matching: "^ReadingMode=day$")
            try await widget.waitForExit(status: 0)
        }
    }

    /// Ready means ready: an app that takes a while to set up (it observes
    /// its settings only after that) is launched, and the test writes at once.
    /// `launch` returns once the program is set up (here, its first
    /// `readLine()`), so the write reaches the observer; before, `ready` came
    /// as the program loaded, and the write landed before the observer existed.
    @Test func aWriteRightAfterLaunchReachesAnObserverRegisteredAfterASlowSetUp() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let app = try await simulation.launch("settings-examples", arguments: ["slow-setup", "0.5"])
            try await app.set("theme", "dark", suite: Self.group)
            let delivery = try await app.waitForChange(key: "theme", value: "dark")
            #expect(delivery.mechanism == .observe)
            try await app.waitForOutput(matching: "^theme=dark$")
            app.closeInput()
            try await app.waitForExit(status: 0)
        }
    }

    /// Launch arguments fill the argument domain; the search list and the
    /// domain of each value are the program's own; a removal reveals the
    /// lower domain again.
    @Test func launchArgumentsAndDomainsAreThePrograms() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let app = try await simulation.launch("settings-examples", arguments: ["wait-input", "-theme", "dark"])
            #expect(app.info["bundleId"] == "com.example.notes")
            #expect(try await app.searchList().first == "NSArgumentDomain")
            #expect(try await app.effectiveValue(forKey: "theme") == EffectiveValue(value: "dark", domain: "NSArgumentDomain"))

            try await app.set("fontSize", 18)
            try await app.synchronize()
            #expect(try await app.effectiveValue(forKey: "fontSize") == EffectiveValue(value: 18, domain: "com.example.notes"))
            try await app.remove("fontSize")
            #expect(try await app.value(forKey: "fontSize") == nil)

            try await app.sendLine("anything")
            app.closeInput()
            try await app.waitForExit(status: 0)
        }
    }

    /// kill -9, SIGTERM, SIGSTOP and SIGCONT reach the program: a launched
    /// executable starts with no signal blocked, as any program does.
    @Test func faultsReachTheProgram() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let terminated = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            try terminated.terminate()
            try await terminated.waitForExit(status: 143)

            let killed = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            try await killed.kill()
            #expect(try await killed.waitForExit() == 137)

            let suspended = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            try suspended.suspend()
            try suspended.resume()
            try await suspended.set("after", true)
            #expect(try await suspended.value(forKey: "after") == true)
        }
    }

    /// A failed wait is a `Failure` at the caller's line; it marks the
    /// simulation failed, so `finish()` keeps the root. A simulation that
    /// did not fail removes it.
    @Test func aFailedWaitNamesTheCallersLineAndKeepsTheRoot() async throws {
        let failing = try Simulation()
        try failing.install(.example)
        let app = try await failing.launch("settings-examples", arguments: ["wait-input"])
        try app.suspend()
        var caught: Failure?
        let expectedLine = #line + 1
        do { _ = try await app.value(forKey: "theme", timeout: .milliseconds(300)) } catch let failure as Failure { caught = failure }
        let failure = try #require(caught)
        #expect(failure.place.line == expectedLine)
        #expect(failure.place.fileID == "GroupSimTestingTests/SimulationTests.swift")
        #expect(failure.message.contains("did not answer"), "\(failure.message)")
        try app.resume()
        #expect(failing.hasFailed)
        failing.finish()
        #expect(FileManager.default.fileExists(atPath: failing.root))
        try FileManager.default.removeItem(atPath: failing.root)

        let passing = try Simulation()
        try passing.install(.example)
        _ = try await passing.launch("settings-examples", arguments: ["wait-input"])
        passing.finish()
        #expect(!FileManager.default.fileExists(atPath: passing.root))
    }

    /// An `#expect` that fails inside `withSimulation` keeps the root too
    /// (the issue is known here, so the test itself passes).
    @Test func anIssueRecordedInTheBodyKeepsTheRoot() async throws {
        let root = Root()
        await withKnownIssue {
            try await withSimulation { simulation in
                root.path = simulation.root
                #expect(Bool(false), "a failing expectation of the test's own")
            }
        }
        let path = try #require(root.path)
        #expect(FileManager.default.fileExists(atPath: path))
        try FileManager.default.removeItem(atPath: path)
    }

    /// An app from inline YAML is installed and launched as itself; a
    /// manifest with a mistake is refused, naming the mistake's line.
    @Test func anInlineManifestIsInstalledAndAMistakeIsNamed() async throws {
        try await withSimulation { simulation in
            let bundle = try simulation.install(
                .yaml(
                    """
                    name: Recipes
                    targets:
                      main-app:
                        bundle-id: com.example.recipes
                        app-groups: [group.com.example.recipes]
                      widget:
                        bundle-id: com.example.recipes.widget
                        app-groups: [group.com.example.recipes]
                    """), on: "iPad")
            #expect(bundle == "com.example.recipes")
            let widget = try await simulation.launch("settings-examples", as: .widget, on: "iPad", arguments: ["wait-input"])
            #expect(widget.info["bundleId"] == "com.example.recipes.widget")
            #expect(widget.info["appGroups"] == ["group.com.example.recipes"])
        }
        let simulation = try Simulation()
        defer { try? FileManager.default.removeItem(atPath: simulation.root) }
        let mistake = #expect(throws: Failure.self) {
            try simulation.install(.yaml("name: Broken\ntargets:\n  main-app:\n    bundle-idd: com.example.broken\n"))
        }
        #expect(mistake?.message.contains(":4:") == true, "\(mistake?.message ?? "")")
        simulation.finish()
    }

    /// A launch of something that is not there fails clearly at the launch's
    /// line; one of an executable without SimulatedFoundation runs without a channel.
    @Test func aMissingExecutableIsAClearFailure() async throws {
        let simulation = try Simulation()
        defer { try? FileManager.default.removeItem(atPath: simulation.root) }
        try simulation.install(.example)
        let line = #line + 1
        let failure = await #expect(throws: Failure.self) { try await simulation.launch("no-such-product") }
        #expect(failure?.place.line == line)
        #expect(failure?.message.contains("no built executable no-such-product") == true, "\(failure?.message ?? "")")
        let notLinking = try await simulation.launch(.path("/bin/true"))
        #expect(!notLinking.hasControlChannel)
        try await notLinking.waitForExit(status: 0)
        simulation.finish()
    }

    /// Two devices signed in to one account: a write to the iCloud store on
    /// the iPhone reaches the iPad through the cloud and both sync agents;
    /// while the iPad is offline it does not, and once online it does.
    @Test func theCloudCarriesAWriteToTheOtherDevice() async throws {
        try await withSimulation { simulation in
            try await simulation.addDevice("iPhone", iCloudAccount: "alice@example.com")
            try await simulation.addDevice("iPad", iCloudAccount: "alice@example.com")
            try simulation.install(.example, on: "iPhone")
            try simulation.install(.example, on: "iPad")
            let phone = try await simulation.launch("settings-examples", on: "iPhone", arguments: ["wait-input"])
            let pad = try await simulation.launch("settings-examples", on: "iPad", arguments: ["wait-input"])

            // The iPad's program uses its store before the write: it is told when the value arrives.
            #expect(try await pad.cloudValue(forKey: "sync-theme") == nil)
            try await phone.setInCloud("sync-theme", "dark")
            let arrived = try await pad.waitForCloudChange(key: "sync-theme")
            #expect(arrived.origin == "other-device")
            #expect(try await pad.cloudValue(forKey: "sync-theme") == "dark")
            try await simulation.waitForCloud()

            try await simulation.setOnline(false, device: "iPad")
            try await phone.setInCloud("sync-theme", "black")
            try await simulation.waitForCloud()
            #expect(try await pad.cloudValue(forKey: "sync-theme") == "dark", "offline: the iPad has not heard")
            try await simulation.setOnline(true, device: "iPad")
            // Reconnecting takes an agent's poll and a new connection: slow under Thread Sanitizer on a busy machine.
            try await simulation.waitForCloud(timeout: .seconds(60))
            #expect(try await pad.cloudValue(forKey: "sync-theme") == "black")
        }
    }

    // MARK: Scenario files

    static let scenarios = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scenarios").path

    @Test func aPassingScenarioPasses() async throws {
        try await Simulation.runScenario(Self.scenarios + "/theme-reaches-widget.yaml")
    }

    /// The failing step's line in the scenario file is where the issue is recorded.
    @Test func aFailingScenarioStepIsAnIssueAtItsLine() async throws {
        let path = Self.scenarios + "/wrong-expectation.yaml"
        await withKnownIssue {
            await expectScenarioPasses(path)
        } matching: { issue in
            for comment in issue.comments { removeKeptRoot(namedIn: comment.rawValue) }
            return issue.sourceLocation?.filePath == path && issue.sourceLocation?.line == 9
                && issue.sourceLocation?.fileID == "Scenarios/wrong-expectation.yaml"
                && issue.comments.contains { $0.rawValue.contains("black") }
        }
    }

    /// A mistake in the scenario file is reported at its line, before anything runs.
    @Test func aMistakeInAScenarioFileIsAtItsLine() async throws {
        let path = Self.scenarios + "/broken-step.yaml"
        let failure = await #expect(throws: Failure.self) { try await Simulation.runScenario(path) }
        #expect(failure?.place.filePath == path)
        #expect(failure?.place.line == 6, "\(failure?.description ?? "")")
    }
}

/// Removes the root a failure's message says was kept (a failing scenario's, here on purpose).
func removeKeptRoot(namedIn message: String) {
    guard let range = message.range(of: "kept for inspection: ") else { return }
    let path = message[range.upperBound...].prefix { !$0.isWhitespace }
    if path.hasPrefix(NSTemporaryDirectory()) || path.hasPrefix("/tmp/") { try? FileManager.default.removeItem(atPath: String(path)) }
}

/// A root path handed out of a `@Sendable` body. Unchecked Sendable: written once inside the body, read after it returned.
private final class Root: @unchecked Sendable {
    var path: String?
}
