import Foundation
import TestSupport
import Testing

/// `groupsim run` itself: scenarios that must fail must fail, with a report
/// that says where and why; bad files are refused before anything runs;
/// processes never outlive a run.
@Suite struct ScenarioRunnerTests {
    let folder = TemporaryRoot()

    func scenario(_ name: String, _ yaml: String) throws -> String {
        let path = folder.path + "/\(name).yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs with TMPDIR inside the test folder, so the scenario roots (and the
    /// processes' command lines) can be found.
    func run(_ arguments: [String]) throws -> ProcessResult {
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        return try runProcess(BuiltExecutable.path("groupsim"), ["run"] + arguments, environment: ["TMPDIR": tmp, "NO_COLOR": "1"])
    }

    /// Processes whose command line mentions this test's folder.
    func leftoverProcesses() -> [String] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.filter { Int($0) != nil }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
            return line.contains(folder.path + "/tmp") && !line.contains(" run ") ? "\(pid): \(line)" : nil
        }
    }

    @Test func aPassingScenarioPasses() throws {
        let path = try scenario(
            "passes",
            """
            summary: the app's write reaches the widget
            processes:
              app: { role: main-app }
              widget: { role: widget }
            steps:
              - launch: [app, widget]
              - set: { in: app, key: theme, value: dark }
              - wait: { for: change, in: widget, key: theme, value: dark }
              - expect: { in: widget, key: theme, value: dark }
            """)
        let result = try run([path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("scenarios: 1 passed, 0 failed"))
    }

    @Test func aWrongExpectationFailsWithExpectedFoundAndWhatEachProcessSaw() throws {
        let path = try scenario(
            "wrong-value",
            """
            summary: must fail - the widget sees dark, not light
            processes:
              app: { role: main-app }
              widget: { role: widget }
            steps:
              - launch: [app, widget]
              - set: { in: app, key: theme, value: dark }
              - wait: { for: change, in: widget, key: theme, value: dark }
              - expect: { in: widget, key: theme, value: light }
            """)
        let result = try run([path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("✘ wrong-value"))
        #expect(result.stdout.contains("\(path):9: expect"))
        #expect(result.stdout.contains("widget: theme should be \"light\", found \"dark\" (from group.com.example.notes)"))
        #expect(result.stdout.contains("what each process saw"))
        #expect(result.stdout.contains("change theme: absent → \"dark\" (other-process)"))
        #expect(result.stdout.contains("scenarios: 0 passed, 1 failed"))
        #expect(leftoverProcesses().isEmpty, "\(leftoverProcesses())")
    }

    @Test func aWaitThatTimesOutFailsAtItsLine() throws {
        let path = try scenario(
            "never",
            """
            summary: must fail - nobody writes the key
            processes:
              widget: { role: widget }
            steps:
              - launch: widget
              - wait: { for: change, in: widget, key: never, timeout: 0.5 }
            """)
        let result = try run([path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("\(path):6: wait for change, key never in widget"))
        #expect(result.stdout.contains("no change, key never event in widget within 0.5 s"))
        #expect(leftoverProcesses().isEmpty)
    }

    @Test func aCrashedProcessAndANotSawCheckAreReported() throws {
        let path = try scenario(
            "not-saw",
            """
            summary: must fail - the widget did see the change
            processes:
              app: { role: main-app }
              widget: { role: widget }
            steps:
              - launch: [app, widget]
              - set: { in: app, key: k, value: 1 }
              - wait: { for: change, in: widget, key: k, timeout: 60 }
              - kill: app
              - expect: [{ exit: app, status: 137 }, { in: widget, not-saw: change, key: k }]
            """)
        let result = try run([
            path, "--junit", folder.path + "/junit.xml", "--json", folder.path + "/report.json", "--timeline", folder.path + "/timeline.html",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("widget should not have seen change, key k, but saw: change k: absent → 1 (other-process)"))
        let junit = try String(contentsOfFile: folder.path + "/junit.xml", encoding: .utf8)
        #expect(junit.contains("<testcase classname=\"\(path)\" name=\"not-saw\""))
        #expect(junit.contains("<failure message=\"widget should not have seen change"))
        let json = try String(contentsOfFile: folder.path + "/report.json", encoding: .utf8)
        #expect(json.contains("\"passed\":false"))
        let html = try String(contentsOfFile: folder.path + "/timeline.html", encoding: .utf8)
        #expect(html.contains("<svg"))
        #expect(html.contains("marker-end=\"url(#arrow)\""))  // the write → seen arrow
    }

    /// An executable's output has a colour of its own in the legend, and the
    /// app's write gets its arrow to the executable's observer delivery.
    @Test func theTimelineDrawsAnExecutablesOutputAndDeliveries() throws {
        let path = try scenario(
            "exec-timeline",
            """
            summary: the app's write reaches the executable's observer
            processes:
              app: { role: main-app }
              reader: { exec: [\(BuiltExecutable.path("settings-examples")), reading-watch, "1"], target: widget }
            steps:
              - launch: [app, reader]
              - wait: { for: output, in: reader, matches: "^ready=true$" }
              - set: { in: app, key: ReadingMode, value: sepia }
              - wait: { for: change, in: reader, key: ReadingMode, value: sepia, origin: other-process, timeout: 60 }
              - wait: { for: exit, in: reader, status: 0 }
            """)
        let page = folder.path + "/timeline.html"
        let result = try run([path, "--timeline", page])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        let output = "#1b7c83"
        #expect(html.contains("style=\"background:\(output)\"></i>program output</span>"))
        #expect(html.contains("fill=\"\(output)\"><title>"), "no output dot")
        #expect(html.contains("marker-end=\"url(#arrow)\""))
        #expect(html.contains("changes seen in other processes: 1,"), "\(html.suffix(600))")
    }

    @Test func countedEventsAndIntentResultsAreChecked() throws {
        let times = try scenario(
            "times",
            """
            summary: must fail - two changes, not one
            processes: { app: { role: main-app } }
            steps:
              - launch: app
              - set: { in: app, key: theme, value: dark }
              - set: { in: app, key: theme, value: black }
              - wait: { for: change, in: app, key: theme, value: black }
              - expect: { in: app, saw: change, key: theme, times: 1 }
            """)
        let result = try scenario(
            "result",
            """
            summary: must fail - the counter starts at zero
            processes: { app: { role: main-app } }
            steps:
              - launch: app
              - intent: { name: CountNote, result: 5 }
            """)
        let run = try run([times, result])
        #expect(run.status == 1)
        #expect(run.stdout.contains("app should have seen change, key theme exactly 1 time(s), saw it 2 time(s)"))
        #expect(run.stdout.contains("intent CountNote should have stored 5, it reported 1"))
    }

    @Test func invalidFilesAreRefusedWithFileAndLineBeforeAnythingRuns() throws {
        let good = try scenario(
            "good",
            """
            summary: would pass
            processes: { app: { role: main-app } }
            steps: [ { launch: app } ]
            """)
        // (file, contents, where the error must point, what it must say)
        let cases: [(String, String, String, String)] = [
            ("bad-yaml", "summary: x\nsteps: [ { launch: app }\n", ":3:", "invalid YAML"),
            (
                "unknown-step", "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n  - fly: app\n", ":4:",
                "steps[0].fly: unknown step 'fly'; steps are: launch"
            ),
            (
                "unknown-process", "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n  - launch: ghost\n", ":4:",
                "steps[0].launch: unknown process 'ghost'; declared: app"
            ),
            (
                "wrong-type", "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n  - increment: { in: app, key: n, by: lots }\n", ":4:",
                "steps[0].increment.by: expected a whole number, found 'lots'"
            ),
            (
                "missing-field", "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n  - set: { in: app, key: n }\n", ":4:",
                "steps[0].set: missing required key 'value'"
            ),
            ("no-summary", "processes: { app: { role: main-app } }\nsteps: []\n", ":1:", "missing required key 'summary'"),
        ]
        for (name, yaml, location, message) in cases {
            let path = try scenario(name, yaml)
            let result = try run([good, path])
            #expect(result.status == 2, "\(name)")
            #expect(result.stderr.contains(path + location), "\(name): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
            #expect(result.stderr.contains("nothing was run"))
            #expect(!result.stdout.contains("passed"))
            try FileManager.default.removeItem(atPath: path)
        }
    }

    @Test func repeatReportsEveryRunAndFilterSelects() throws {
        let a = try scenario("alpha", "summary: a\ntags: [concurrency]\nprocesses: { app: { role: main-app } }\nsteps: [ { launch: app } ]\n")
        _ = try scenario("beta", "summary: b\nprocesses: { app: { role: main-app } }\nsteps: [ { launch: app } ]\n")
        let result = try run([folder.path, "--filter", "concurrency", "--repeat", "3"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "✔ alpha").count == 4)
        #expect(!result.stdout.contains("beta"))
        #expect(result.stdout.contains("scenarios: 3 passed, 0 failed"))
        _ = a
    }

    /// SIGINT and SIGTERM: every process is ended, the run exits 130 or 143,
    /// and the summary and the JUnit report say it was interrupted.
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptedRunEndsEveryProcessItStartedAndSaysSo(signal: Int32) throws {
        let path = try scenario(
            "long",
            """
            summary: waits a long time
            processes:
              app: { role: main-app }
              widget: { role: widget }
            steps:
              - launch: [app, widget]
              - suspend: widget
              - wait: { for: change, in: app, key: never, timeout: 60 }
            """)
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let junit = folder.path + "/junit.xml"
        let runner = try RunningProcess(
            BuiltExecutable.path("groupsim"), ["run", path, "--junit", junit], environment: ["TMPDIR": tmp, "NO_COLOR": "1"])
        defer { endLeftovers() }
        try runner.waitForLine { $0.hasPrefix("Running 1 scenario") }
        // Wait until both processes are up (their command lines name the test folder).
        let deadline = Date().addingTimeInterval(20)
        while leftoverProcesses().count < 2 && Date() < deadline { _ = try? runner.nextLine(timeout: 0.05) }
        #expect(leftoverProcesses().count == 2)
        runner.signal(signal)
        #expect(try runner.waitForExit(timeout: 30) == 128 + signal)
        let gone = Date().addingTimeInterval(10)
        while !leftoverProcesses().isEmpty && Date() < gone { _ = try? runner.nextLine(timeout: 0.05) }
        #expect(leftoverProcesses().isEmpty, "\(leftoverProcesses())")
        while try runner.nextLine(timeout: 10) != nil {}
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        let output = runner.allLines.joined(separator: "\n")
        #expect(output.contains("interrupted by \(name)"), "\(output)")
        #expect(output.contains("scenarios: 0 passed, 1 failed"), "\(output)")
        let report = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(report.contains("interrupted by \(name)"), "\(report)")
    }

    /// kill -9 of the runner, which no handler sees: its cloud, its agent and
    /// its apps (a suspended one too) end with it, through the kernel.
    @Test func killingTheRunnerEndsItsCloudAgentsAndApps() throws {
        let path = try scenario(
            "cloud-long",
            """
            summary: waits a long time, with the cloud
            devices:
              - iPhone: { account: alice }
            processes:
              app: { role: main-app, device: iPhone }
              widget: { role: widget, device: iPhone }
            steps:
              - launch: [app, widget]
              - suspend: widget
              - wait: { for: change, in: app, key: never, timeout: 120 }
            """)
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let runner = try RunningProcess(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"])
        defer { endLeftovers() }
        try runner.waitForLine { $0.hasPrefix("Running 1 scenario") }
        // The cloud, the agent, the app and the widget, the widget stopped.
        let deadline = Date().addingTimeInterval(30)
        while (leftoverProcesses().count < 4 || !leftoverPIDs().contains(where: { Self.isStopped($0) })) && Date() < deadline {
            _ = try? runner.nextLine(timeout: 0.05)
        }
        #expect(leftoverProcesses().count == 4, "\(leftoverProcesses())")
        #expect(leftoverProcesses().contains { $0.contains("cloud serve") } && leftoverProcesses().contains { $0.contains("cloud agent") })
        #expect(leftoverPIDs().contains(where: { Self.isStopped($0) }))
        runner.signal(SIGKILL)
        #expect(try runner.waitForExit() == SIGKILL)
        let gone = Date().addingTimeInterval(10)
        while !leftoverProcesses().isEmpty && Date() < gone { usleep(20_000) }
        #expect(leftoverProcesses().isEmpty, "\(leftoverProcesses())")
    }

    /// The pids of `leftoverProcesses`.
    func leftoverPIDs() -> [Int32] { leftoverProcesses().compactMap { Int32($0.prefix { $0 != ":" }) } }

    /// Kills whatever a failed test left running.
    func endLeftovers() {
        for pid in leftoverPIDs() { kill(pid, SIGKILL) }
    }

    /// Whether the process is stopped (state T in /proc/PID/stat).
    static func isStopped(_ pid: Int32) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return false }
        let text = String(decoding: data, as: UTF8.self)
        // The state follows the command name in parentheses, which may itself hold spaces.
        guard let close = text.lastIndex(of: ")") else { return false }
        return text[text.index(after: close)...].split(separator: " ").first == "T"
    }
}

extension ScenarioRunnerTests {
    @Test func aCommandToAProcessThatDiedFailsTheScenarioNotTheRunner() throws {
        let path = try scenario(
            "dead",
            """
            summary: must fail - the app was killed
            processes: { app: { role: main-app } }
            steps:
              - launch: app
              - kill: app
              - wait: { for: exit, in: app, status: 137 }
              - set: { in: app, key: theme, value: dark }
            """)
        let result = try run([path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("app has exited (status 137); launch or restart it first"))
        #expect(result.stdout.contains("scenarios: 0 passed, 1 failed"))
    }
}
