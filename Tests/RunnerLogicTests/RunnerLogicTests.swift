import AppProtocol
import ChildProcess
import PropertyList
import ScenarioModel
import Scenarios
import Testing

/// The runner's logic through its seam (`ProcessLauncher`, `RunnerClock`): scripted processes and a clock that moves
/// only when the runner waits, so no process starts and no wait takes real time. The same judgements with real
/// processes are IntegrationTests' ScenarioRunnerTests and the scenario library.
@Suite struct RunnerLogicTests {
    static let group = "group.com.example.notes"

    /// A role that keeps defaults in memory: `set`, `increment` and `get` of its app group.
    static let store: ScriptedProcesses.Script = { request, id, process in
        switch request {
        case .set(let key, let value):
            process.withStore { $0[key] = value }
            process.answer(id, .done)
        case .increment(let key, let by):
            let value = process.withStore { store -> Int64 in
                var next = by
                if case .integer(let old)? = store[key] { next += old }
                store[key] = .integer(next)
                return next
            }
            process.answer(id, .integer(value))
        case .get(let key): process.answer(id, .value(key: key, value: process.withStore { $0[key] }, domain: group))
        default: process.answer(id, .done)
        }
    }

    func run(_ steps: String, _ scripts: [String: ScriptedProcesses.Script], clock: TestClock = TestClock()) throws -> ScenarioResult {
        let text = """
            summary: the runner's logic
            processes:
              app: { role: main-app }
              widget: { role: widget }
            steps:

            """ + steps
        let scenario = try ScenarioParser.parse(text, file: "/tmp/runner-logic.yaml", fileSystem: FixedScenarioFiles())
        return ScenarioRunner(binaries: "/nonexistent", processes: ScriptedProcesses(scripts), clock: clock).run(scenario)
    }

    @Test func aValueCheckThatHoldsPasses() throws {
        let result = try run(
            """
              - launch: app
              - set: { in: app, key: theme, value: dark }
              - expect: { in: app, key: theme, value: dark }
            """, ["main-app": Self.store])
        #expect(result.failure == nil, "\(result.failure.map(String.init(describing:)) ?? "")")
    }

    @Test func aValueCheckThatFailsSaysWhatItFoundAtItsLine() throws {
        let result = try run(
            """
              - launch: [app, widget]
              - set: { in: widget, key: theme, value: dark }
              - expect: { in: widget, key: theme, value: light }
            """, ["widget": Self.store])
        // The text a real run gives (IntegrationTests' aFailingCheckIsReportedWithWhatEachProcessSaw).
        #expect(result.failure?.description == "line 8: expect: widget: theme should be \"light\", found \"dark\" (from group.com.example.notes)")
        #expect(result.failure?.line == 8)
        #expect(result.failure?.message == "widget: theme should be \"light\", found \"dark\" (from group.com.example.notes)")
    }

    @Test func aWaitThatTimesOutFailsOnTheClockAtOnce() throws {
        let clock = TestClock()
        let result = try run(
            """
              - launch: widget
              - wait: { for: change, in: widget, key: never, timeout: 30 }
            """, [:], clock: clock)
        #expect(result.failure?.description == "line 7: wait for change, key never in widget: no change, key never event in widget within 30.0 s")
        // The wait's whole bound passed on the test clock, none in real time; the report's duration is the clock's.
        #expect(clock.elapsed >= 30)
        #expect(result.duration >= 30)
    }

    /// The app says why on stderr and ends with `status`, as a program the step ends does.
    static func endsOnSet(status: Int32) -> ScriptedProcesses.Script {
        { request, id, process in
            guard case .set = request else { return process.answer(id, .done) }
            process.complain("uncaught exception: key is too long")
            process.end(.exited(status))
        }
    }

    @Test func aStepThatMustEndItsProcessPassesWhenItEndsAsSaid() throws {
        let result = try run(
            """
              - launch: app
              - set: { in: app, key: k, value: 1, exits: { status: 134, error: too long } }
              - expect: { exit: app, status: 134 }
            """, ["main-app": Self.endsOnSet(status: 134)])
        #expect(result.failure == nil, "\(result.failure.map(String.init(describing:)) ?? "")")
    }

    @Test func aStepThatMustEndItsProcessFailsOnAnotherStatusOrOtherWords() throws {
        let status = try run(
            """
              - launch: app
              - set: { in: app, key: k, value: 1, exits: { status: 134 } }
            """, ["main-app": Self.endsOnSet(status: 1)])
        #expect(status.failure?.message == "app exited with status 1, not 134")
        let words = try run(
            """
              - launch: app
              - set: { in: app, key: k, value: 1, exits: { status: 134, error: refused } }
            """, ["main-app": Self.endsOnSet(status: 134)])
        #expect(words.failure?.message == "app exited with status 134, but its stderr does not say \"refused\"")
    }

    @Test func aStepThatMustEndItsProcessFailsWhenItKeepsRunning() throws {
        let clock = TestClock()
        let result = try run(
            """
              - launch: app
              - set: { in: app, key: k, value: 1, exits: { status: 134 } }
            """, ["main-app": Self.store], clock: clock)
        #expect(
            result.failure?.description
                == "line 7: set exits={\"status\":134} key=\"k\" value=1 in app: app kept running (it answered ok) for 20 s; the step should have ended it with status 134"
        )
        #expect(clock.elapsed >= 20)
    }

    @Test func aFailingRoundOfARepeatIsNamed() throws {
        let result = try run(
            """
              - launch: app
              - repeat:
                  times: 3
                  steps:
                    - increment: { in: app, key: n }
                    - expect: { in: app, key: n, value: 1 }
            """, ["main-app": Self.store])
        #expect(result.failure?.description == "line 11: expect: round 2 of 3: app: n should be 1, found 2 (from group.com.example.notes)")
    }

    /// The app says three things while it answers a set: a change, a line that is not the protocol, another change.
    static let chatty: ScriptedProcesses.Script = { request, id, process in
        guard case .set(let key, let value) = request else { return process.answer(id, .done) }
        process.say(
            ControlProtocol.event(
                .change(ValueChange(key: "before-" + key, old: nil, new: value, origin: "this-process", domain: group, valueDomain: group))))
        process.say("not a protocol line")
        process.say(
            ControlProtocol.event(.change(ValueChange(key: key, old: nil, new: value, origin: "this-process", domain: group, valueDomain: group))))
        process.answer(id, .done)
    }

    @Test func eventsAndOutputAreRecordedInTheOrderTheProcessSaidThem() throws {
        let result = try run(
            """
              - launch: app
              - set: { in: app, key: theme, value: dark }
              - wait: { for: change, in: app, key: theme }
            """, ["main-app": Self.chatty])
        #expect(result.failure == nil, "\(result.failure.map(String.init(describing:)) ?? "")")
        let said = result.events.filter { $0.process == "app" && $0.kind != .action }.map { "\($0.kind.rawValue) \($0.text)" }
        #expect(
            said == [
                "event ready", "response ok", "event change before-theme: absent → \"dark\" (this-process)", "stderr not a protocol line",
                "event change theme: absent → \"dark\" (this-process)", "response ok", "exit exited with status 0",
            ])
    }

    @Test func quietLooksFromTheStepBeforeItPastWhatAWaitMatched() throws {
        // The change of `before-theme` came two steps before the `quiet`: not its business.
        let passes = try run(
            """
              - launch: app
              - set: { in: app, key: theme, value: dark }
              - wait: { for: change, in: app, key: theme }
              - quiet: { for: change, in: app, key: before-theme, seconds: 5 }
            """, ["main-app": Self.chatty])
        #expect(passes.failure == nil, "\(passes.failure.map(String.init(describing:)) ?? "")")
        // The step just before it counts, however early its events came.
        let fails = try run(
            """
              - launch: app
              - set: { in: app, key: theme, value: dark }
              - quiet: { for: change, in: app, key: theme, seconds: 5 }
            """, ["main-app": Self.chatty])
        #expect(
            fails.failure?.description
                == "line 8: no change, key theme in app for 5.0 s: app should have had no change, key theme for 5.0 s, but had: change theme: absent → \"dark\" (this-process)"
        )
    }
}
