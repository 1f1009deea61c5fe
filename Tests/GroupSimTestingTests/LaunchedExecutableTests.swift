import Foundation
import GroupSimTesting
import Testing

/// Negative waits, warnings, bounded output, executables that do not link
/// SimulatedFoundation, output of either stream, restart and device erasure.
@Suite struct LaunchedExecutableTests {
    static let group = "group.com.example.notes"

    /// A simulation whose failures are expected here: its root is removed whatever happened.
    private func withExpectedFailures(_ body: (Simulation) async throws -> Void) async throws {
        let simulation = try Simulation()
        defer {
            simulation.finish()
            try? FileManager.default.removeItem(atPath: simulation.root)
        }
        try await body(simulation)
    }

    /// No delivery of the key: the negative wait passes. One arrives: it fails
    /// as soon as it comes (not at the end of `within`), at the caller's line,
    /// naming the observer and the value.
    @Test func expectNoChangeFailsAtOnceNamingTheDelivery() async throws {
        try await withExpectedFailures { simulation in
            try simulation.install(.example)
            let widget = try await simulation.launch("settings-examples", as: .widget, arguments: ["reading-watch", "2"])
            try await widget.waitForOutput(matching: "^ready=true$")
            let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            try await app.set("Unobserved", 1, suite: Self.group)
            try await widget.expectNoChange(key: "ReadingMode", within: .milliseconds(300))

            try await app.set("ReadingMode", "night", suite: Self.group)
            let started = ContinuousClock.now
            let line = #line + 1
            let failure = await #expect(throws: Failure.self) { try await widget.expectNoChange(key: "ReadingMode", within: .seconds(60)) }
            #expect(ContinuousClock.now - started < .seconds(30), "the failure comes with the delivery, not at the deadline")
            #expect(failure?.place.line == line)
            #expect(failure?.place.fileID == "GroupSimTestingTests/LaunchedExecutableTests.swift")
            #expect(failure?.message.contains("key-path-observation") == true, "\(failure?.message ?? "")")
            #expect(failure?.message.contains("\"night\"") == true, "\(failure?.message ?? "")")
        }
    }

    /// A warning is waited for like a delivery; one that does not come is a
    /// failure naming the warnings that did.
    @Test func waitForWarningReturnsTheWarningsMessage() async throws {
        try await withExpectedFailures { simulation in
            try simulation.install(.example)
            let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            _ = try await app.value(forKey: "theme", suite: "group.com.example.unentitled")
            let message = try await app.waitForWarning(kind: "missing-entitlement")
            #expect(message.contains("group.com.example.unentitled"), "\(message)")
            let missing = await #expect(throws: Failure.self) { try await app.waitForWarning(kind: "commit-failed", timeout: .milliseconds(200)) }
            #expect(missing?.message.contains("no commit-failed warning") == true, "\(missing?.message ?? "")")
            #expect(missing?.message.contains("missing-entitlement:") == true, "\(missing?.message ?? "")")
        }
    }

    /// A program that floods its output is kept to the runner's bound (the
    /// last 2,000 lines); a wait for a dropped line says how many were dropped.
    @Test func floodedOutputIsBoundedAndAFailedWaitSaysWhatWasDropped() async throws {
        try await withExpectedFailures { simulation in
            try simulation.install(.example)
            let flood = try await simulation.launch(.path("/usr/bin/seq"), arguments: ["300000"])
            try await flood.waitForExit(status: 0, timeout: .seconds(60))
            #expect(flood.standardOutputLines.count == 2_000)
            #expect(flood.standardOutputLines.last == "300000")
            let failure = await #expect(throws: Failure.self) { try await flood.waitForOutput(matching: "^1$", timeout: .seconds(5)) }
            #expect(failure?.message.contains("298000 of its 300000 output lines were dropped") == true, "\(failure?.message ?? "")")
        }
    }

    /// An executable that does not link SimulatedFoundation is launched with
    /// the target's identity and no signal blocked; its output (either stream),
    /// input, end and signals work; the channel's calls say how to link it.
    @Test func anExecutableWithoutSimulatedFoundationRunsWithoutAChannel() async throws {
        try await withExpectedFailures { simulation in
            try simulation.install(.example)
            let script = "grep SigBlk /proc/self/status; echo bundle=$GROUPSIM_BUNDLE_ID; echo oops >&2; read line; echo got=$line"
            let shell = try await simulation.launch(.path("/bin/sh"), as: .widget, arguments: ["-c", script])
            #expect(!shell.hasControlChannel)
            try await shell.waitForOutput(matching: "^SigBlk:\\s*0+$")
            try await shell.waitForOutput(matching: "^oops$", stream: .standardError)
            try await shell.waitForOutput(matching: "^bundle=com.example.notes.widget$")
            try await shell.sendLine("hi")
            try await shell.waitForOutput(matching: "^got=hi$", stream: .either)
            try await shell.waitForExit(status: 0)

            let line = #line + 1
            let refused = await #expect(throws: Failure.self) { try await shell.value(forKey: "theme") }
            #expect(refused?.place.line == line)
            #expect(refused?.message.contains("does not link SimulatedFoundation") == true, "\(refused?.message ?? "")")
            #expect(refused?.message.contains("import SimulatedFoundation") == true, "\(refused?.message ?? "")")
            let noWait = await #expect(throws: Failure.self) { try await shell.expectNoChange(key: "theme", within: .seconds(1)) }
            #expect(noWait?.message.contains("does not link SimulatedFoundation") == true, "\(noWait?.message ?? "")")

            // SIGTERM reaches it (its signals are not blocked).
            let sleeper = try await simulation.launch(.path("/bin/sh"), arguments: ["-c", "echo started; exec sleep 60"])
            try await sleeper.waitForOutput(matching: "^started$")
            try sleeper.terminate()
            try await sleeper.waitForExit(status: 143)
        }
    }

    /// A stderr wait does not consume standard output's lines, nor the other way round.
    @Test func eachStreamHasItsOwnWaits() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let shell = try await simulation.launch(.path("/bin/sh"), arguments: ["-c", "echo a; echo b >&2; echo c; echo d >&2"])
            try await shell.waitForExit(status: 0)
            try await shell.waitForOutput(matching: "^d$", stream: .standardError)
            try await shell.waitForOutput(matching: "^a$")
            try await shell.waitForOutput(matching: "^c$", stream: .either)
            #expect(shell.standardErrorLines == ["b", "d"])
            #expect(shell.standardOutputLines == ["a", "c"])
            let refused = await #expect(throws: Failure.self) { try await shell.sendLine("two\nlines") }
            #expect(refused?.message.contains("no newline") == true, "\(refused?.message ?? "")")
        }
    }

    /// A restart is the same executable with the same identity (its saved
    /// values are there), with other launch arguments if given.
    @Test func restartStartsTheSameExecutableAsTheSameTarget() async throws {
        try await withSimulation { simulation in
            try simulation.install(.example)
            let first = try await simulation.launch("settings-examples", as: .widget, arguments: ["wait-input", "-theme", "dark"])
            try await first.set("fontSize", 18)
            try await first.synchronize()
            let second = try await simulation.restart(first, arguments: ["wait-input", "-theme", "light"])
            #expect(!first.isRunning)
            #expect(second.pid != first.pid)
            #expect(second.info["bundleId"] == "com.example.notes.widget")
            #expect(try await second.value(forKey: "fontSize") == 18)
            #expect(try await second.effectiveValue(forKey: "theme") == EffectiveValue(value: "light", domain: "NSArgumentDomain"))
            let third = try await simulation.restart(second)
            #expect(try await third.value(forKey: "theme") == "light")
        }
    }

    /// An erased device keeps no app: a launch is refused, and a restart
    /// finds the program's saved values gone.
    @Test func anErasedDeviceHasNoAppsLeft() async throws {
        try await withExpectedFailures { simulation in
            try simulation.install(.example)
            let app = try await simulation.launch("settings-examples", arguments: ["wait-input"])
            try await app.set("fontSize", 18)
            try await app.synchronize()
            try await simulation.eraseDevice("iPhone")
            let refused = await #expect(throws: Failure.self) { try await simulation.launch("settings-examples") }
            #expect(refused?.message.contains("no app is installed on iPhone") == true, "\(refused?.message ?? "")")
            let unknown = await #expect(throws: Failure.self) { try await simulation.eraseDevice("Watch") }
            #expect(unknown?.message.contains("cannot erase Watch") == true, "\(unknown?.message ?? "")")
        }
    }
}
