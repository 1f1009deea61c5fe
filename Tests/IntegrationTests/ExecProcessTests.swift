import Foundation
import TestSupport
import Testing

/// Scenario processes that are a user's own executable (`exec:`): bad ones
/// are refused when the file is read, at file:line:column; a process that
/// floods its output, exits or hangs at start, or closes its control
/// channel is reported clearly, and never hangs the run.
@Suite struct ExecProcessTests {
    let folder = TemporaryRoot()

    func write(_ name: String, _ text: String, executable: Bool = false) throws -> String {
        let path = folder.path + "/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        if executable { chmod(path, 0o755) }
        return path
    }

    /// `groupsim ARGUMENTS` with TMPDIR in the test folder; a run that has not
    /// ended within `limit` seconds is killed and fails the test (it hung).
    func groupsim(_ arguments: [String], limit: TimeInterval = 60) throws -> ProcessResult {
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        return try runBounded(BuiltExecutable.path("groupsim"), arguments, environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: limit)
    }

    func expectRefused(
        _ name: String, _ yaml: String, _ location: String, _ messages: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let path = try write(name + ".yaml", yaml)
        let result = try groupsim(["run", "--list", path])
        #expect(result.status == 2, "\(name): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(path + location + " "), "\(name): \(result.stderr)", sourceLocation: sourceLocation)
        for message in messages {
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    static var settingsExamples: String { BuiltExecutable.path("settings-examples") }

    @Test func aMissingExecutableIsRefusedWithThePathTried() throws {
        try expectRefused(
            "missing",
            """
            summary: x
            processes:
              tool: { exec: [./not-built-yet, --verbose] }
            steps:
              - launch: tool
            """, ":3:17:", ["no executable at '\(folder.path)/not-built-yet'", "relative to the scenario file's folder"])
        try expectRefused(
            "not-on-path",
            """
            summary: x
            processes:
              tool: { exec: no-such-tool-anywhere }
            steps:
              - launch: tool
            """, ":3:17:", ["no executable 'no-such-tool-anywhere' among the build's products or on PATH"])
        _ = try write("data.txt", "not a program")
        try expectRefused(
            "not-executable",
            """
            summary: x
            processes:
              tool: { exec: [./data.txt] }
            steps:
              - launch: tool
            """, ":3:17:", ["'\(folder.path)/data.txt' is not an executable file"])
        // A FIFO marked executable would block the reading of its symbols: refused before.
        #expect(mkfifo(folder.path + "/pipe", 0o755) == 0)
        try expectRefused(
            "fifo",
            """
            summary: x
            processes:
              tool: { exec: [./pipe] }
            steps:
              - launch: tool
            """, ":3:17:", ["'\(folder.path)/pipe' is not an executable file"])
    }

    @Test func aStepNeedingTheControlChannelOfAnExecutableWithoutSimulatedFoundationIsRefusedSayingHowToLinkIt() throws {
        // cat is an ELF executable with no SimulatedFoundation in it.
        try expectRefused(
            "no-foundation",
            """
            summary: x
            processes:
              copier: { exec: [cat] }
            steps:
              - launch: copier
              - set: { in: copier, key: theme, value: dark }
            """, ":6:10:",
            [
                "'set' needs the control channel of copier", "does not link SimulatedFoundation",
                "`.product(name: \"SimulatedFoundation\", package: …)`", "`import SimulatedFoundation`",
            ])
        try expectRefused(
            "no-foundation-check",
            """
            summary: x
            processes:
              copier: { exec: [cat] }
            steps:
              - launch: copier
              - expect:
                  - { in: copier, output: { contains: x } }
                  - { in: copier, key: theme, value: dark }
            """, ":8:9:", ["this check needs the control channel of copier", "does not link SimulatedFoundation"])
        try expectRefused(
            "forced-control",
            """
            summary: x
            processes:
              copier: { exec: [cat], control: true }
            steps:
              - launch: copier
            """, ":3:35:", ["control: true, but", "does not link SimulatedFoundation"])
        try expectRefused(
            "opted-out",
            """
            summary: x
            processes:
              tool: { exec: [\(Self.settingsExamples), wait-input], control: false }
            steps:
              - launch: tool
              - wait: { for: change, in: tool, key: theme }
            """, ":6:11:", ["'wait' needs the control channel of tool", "declared with control: false"])
    }

    @Test func aBadRegularExpressionIsRefusedAtItsLineAndColumn() throws {
        try expectRefused(
            "bad-wait",
            """
            summary: x
            processes:
              copier: { exec: [cat] }
            steps:
              - launch: copier
              - wait: { for: output, in: copier, matches: "([a-z" }
            """, ":6:47:", ["'([a-z' is not a valid regular expression"])
        try expectRefused(
            "bad-check",
            """
            summary: x
            processes:
              copier: { exec: [cat] }
            steps:
              - launch: copier
              - expect: { in: copier, output: { matches: "a{2,1}" } }
            """, ":6:46:", ["'a{2,1}' is not a valid regular expression"])
        try expectRefused(
            "output-without-pattern",
            """
            summary: x
            processes:
              copier: { exec: [cat] }
            steps:
              - wait: { for: output, in: copier }
            """, ":5:18:", ["an output event needs 'matches'"])
        try expectRefused(
            "status-with-key",
            """
            summary: x
            processes:
              copier: { exec: [cat] }
            steps:
              - expect: { in: copier, output: { contains: x }, status: 0 }
            """, ":5:60:", ["'status' and 'output' are two checks (an output check, an exit check); write each as a check of its own"])
    }

    @Test func aFloodingProcessIsKeptBoundedAndTheReportsSayHowManyLinesWereDropped() throws {
        let path = try write(
            "flood.yaml",
            """
            summary: must fail at its last step, after a flood of output
            processes:
              flood: { exec: [awk, 'BEGIN { for (i = 0; i < 300000; i++) print "flood-line"; print "done" }'] }
            steps:
              - launch: flood
              - wait: { for: output, in: flood, matches: "^done$", timeout: 300 }
              - wait: { for: exit, in: flood, status: 0 }
              - expect: { in: flood, output: { contains: flood-line, stream: stdout } }
              - wait: { for: output, in: flood, matches: "^never printed$", timeout: 1 }
            """)
        let json = folder.path + "/flood.json"
        let junit = folder.path + "/flood.xml"
        let result = try groupsim(["run", path, "--json", json, "--junit", junit])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("\(path):9:"), "\(result.stdout)")
        #expect(result.stdout.contains("flood exited (status 0) before an output line matching /^never printed$/"), "\(result.stdout)")
        #expect(result.stdout.contains("its last lines (10 of 300001, 298001 earlier ones dropped)"), "\(result.stdout)")
        #expect(result.stdout.contains("[stdout] done"), "\(result.stdout)")
        // The report holds the first 2,000 lines and says how many more there were.
        let report = try String(contentsOfFile: json, encoding: .utf8)
        #expect(report.components(separatedBy: "\"name\":\"output\"").count - 1 == 2001)
        #expect(report.contains("298001 more output lines are not in the report"))
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("<system-out>flood [stdout] flood-line\n"))
        #expect(xml.count < 200_000, "\(xml.count) characters")
    }

    @Test func wideLinesAreTakenInPiecesAndWhatIsKeptIsBoundedInBytes() throws {
        // 40 lines of 131,072 bytes: each is taken as two pieces of 64 KiB, and 1 MiB holds the last 15 pieces and "end".
        let path = try write(
            "wide.yaml",
            """
            summary: must fail - no line says never
            processes:
              wide: { exec: [awk, 'BEGIN { line = "w"; while (length(line) < 100000) line = line line; for (i = 0; i < 40; i++) print line; print "end" }'] }
            steps:
              - launch: wide
              - wait: { for: exit, in: wide, status: 0 }
              - expect: { in: wide, output: { contains: never } }
            """)
        let json = folder.path + "/wide.json"
        let result = try groupsim(["run", path, "--json", json])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("wide wrote no line containing \"never\" among its last 16 (65 earlier lines were dropped)"), "\(result.stdout)")
        #expect(result.stdout.contains("[stdout] end"), "\(result.stdout)")
        // Failure messages show a line's start; the report holds at most 1 MiB of output.
        #expect(result.stdout.utf8.count < 20_000, "\(result.stdout.utf8.count) bytes")
        let report = try String(contentsOfFile: json, encoding: .utf8)
        #expect(report.contains("65 more output lines are not in the report"))
        #expect(report.utf8.count < 1_300_000, "\(report.utf8.count) bytes")
    }

    @Test func outputWithoutNewlinesIsTakenInPiecesAndTheRunGoesOn() throws {
        // 20 MB on one line: kept as pieces of 64 KiB (the last 16 in 1 MiB), never as one growing line.
        let path = try write(
            "no-newline.yaml",
            """
            summary: one endless line, then a short one
            processes:
              spew: { exec: [sh, -c, "head -c 20000000 /dev/zero | tr '\\\\0' x; echo; echo end"] }
            steps:
              - launch: spew
              - wait: { for: output, in: spew, matches: "^end$", timeout: 60 }
              - expect: { in: spew, output: { matches: "^x{65536}$" } }
            """)
        let result = try groupsim(["run", path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test func aProcessThatExitsAtStartIsReportedWithItsStatusAndLastLines() throws {
        _ = try write("fails.sh", "#!/bin/sh\necho 'cannot start: no configuration' >&2\nexit 5\n", executable: true)
        let path = try write(
            "exits.yaml",
            """
            summary: must fail - the program exits before it serves its channel
            processes:
              tool: { exec: [./fails.sh], control: true }
            steps:
              - launch: tool
            """)
        let result = try groupsim(["run", path])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("tool exited (status 5) before a ready event"), "\(result.stdout)")
        #expect(result.stdout.contains("[stderr] cannot start: no configuration"), "\(result.stdout)")
    }

    @Test func aProcessThatHangsAtStartFailsAfterItsStartTimeout() throws {
        _ = try write("hangs.sh", "#!/bin/sh\necho waiting for nothing\nexec sleep 60\n", executable: true)
        let path = try write(
            "hangs.yaml",
            """
            summary: must fail - the program never connects to its channel
            processes:
              tool: { exec: [./hangs.sh], control: true, start-timeout: 1 }
            steps:
              - launch: tool
            """)
        let started = Date()
        let result = try groupsim(["run", path], limit: 30)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("tool (\(folder.path)/hangs.sh) did not connect to its control channel within 1.0 s (its start-timeout)"),
            "\(result.stdout)")
        #expect(result.stdout.contains("[stdout] waiting for nothing"), "\(result.stdout)")
        #expect(Date().timeIntervalSince(started) < 25)
    }

    @Test func aProcessThatClosesItsControlChannelIsReportedAndTheRunEnds() throws {
        // A program that serves the protocol by hand: it comes up, answers the runner's ping, then closes the channel and lives on.
        _ = try write(
            "closes.py",
            """
            #!/usr/bin/env python3
            from json import dumps, loads
            from os import environ
            from time import sleep
            from socket import socket, AF_UNIX
            channel = socket(AF_UNIX)
            channel.connect(environ["GROUPSIM_CONTROL_SOCKET"])
            lines = channel.makefile("rw")
            lines.write('{"event":"ready","protocol":1,"info":{}}\\n'); lines.flush()
            request = loads(lines.readline())
            lines.write(dumps({"id": request["id"], "ok": True}) + "\\n"); lines.flush()
            lines.close(); channel.close()
            print("channel closed", flush=True)
            sleep(60)
            """, executable: true)
        let path = try write(
            "closes.yaml",
            """
            summary: must fail - the program closes its control channel
            processes:
              tool: { exec: [./closes.py], control: true }
            steps:
              - launch: tool
              - wait: { for: output, in: tool, matches: "^channel closed$" }
              - expect: { in: tool, key: theme, value: dark }
            """)
        let result = try groupsim(["run", path], limit: 30)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("\(path):7:"), "\(result.stdout)")
        #expect(result.stdout.contains("tool closed its control channel before answering"), "\(result.stdout)")
    }

    /// kill -9 of the runner, which no handler sees: an executable it started
    /// (one that sets up nothing itself, a stopped one too) ends with it, through
    /// the kernel, as the built-in roles do.
    @Test func killingTheRunnerEndsTheExecutablesItStarted() throws {
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        // The last argument only marks the processes as this test's.
        let sleeper = "[python3, -c, 'import time; time.sleep(600)', \(tmp)/marker]"
        // A start-timeout as long as the wait below: under the whole suite's load, `groupsim exec` took over 20 s
        // (the default) to load and replace itself with the program.
        let path = try write(
            "long.yaml",
            """
            summary: waits a long time
            processes:
              first: { exec: \(sleeper), start-timeout: 120 }
              second: { exec: \(sleeper), start-timeout: 120 }
            steps:
              - launch: [first, second]
              - suspend: second
              - wait: { for: output, in: first, matches: never, timeout: 120 }
            """)
        func marked() -> [Int32] {
            let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return pids.compactMap(Int32.init).filter { pid in
                guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
                return String(decoding: data, as: UTF8.self).contains(tmp + "/marker")
            }
        }
        let runner = try RunningProcess(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"])
        defer { for pid in marked() { kill(pid, SIGKILL) } }
        try runner.waitForLine { $0.hasPrefix("Running 1 scenario") }
        // As long as the scenario's own wait may take: under the whole suite's load, starting two executables took over 30 s.
        let deadline = Date().addingTimeInterval(120)
        // Both started (a process stopped right after its start may still be `groupsim exec`, which it replaces itself with).
        while marked().count < 2 && Date() < deadline { _ = try? runner.nextLine(timeout: 0.05) }
        #expect(marked().count >= 2)
        runner.signal(SIGKILL)
        #expect(try runner.waitForExit() == SIGKILL)
        let gone = Date().addingTimeInterval(10)
        while !marked().isEmpty && Date() < gone { usleep(20_000) }
        #expect(marked().isEmpty, "still running: \(marked())")
    }
}

/// `send` to a process that does not take its input, and the GROUPSIM_* and
/// other fields of an exec process refused at load.
extension ExecProcessTests {
    @Test func aSendToAProcessThatNeverReadsItsStdinFailsInBoundedTimeSayingWhatWasNotTaken() throws {
        let line = String(repeating: "x", count: 100 * 1024)
        let path = try write(
            "never-reads.yaml",
            """
            summary: must fail - sleep never reads its stdin, and a pipe holds 64 KiB
            processes:
              sleeper: { exec: [sleep, "60"] }
            steps:
              - launch: sleeper
              - send: { to: sleeper, line: \(line) }
              - send: { to: sleeper, line: \(line) }
            """)
        let started = Date()
        let result = try groupsim(["run", path], limit: 45)
        #expect(result.status == 1, "\(result.stdout.prefix(2000))\(result.stderr)")
        #expect(result.stdout.contains("\(path):6:"), "\(result.stdout.prefix(2000))")
        #expect(result.stdout.contains("sleeper did not take the line within 10 s: "), "\(result.stdout.prefix(2000))")
        #expect(result.stdout.contains(" of its \(line.utf8.count + 1) bytes (with the newline) were not written"), "\(result.stdout.prefix(2000))")
        #expect(result.stdout.contains("have it read its stdin, or send it less"), "\(result.stdout.prefix(2000))")
        #expect(Date().timeIntervalSince(started) < 40)
    }

    @Test func aSentLineWithANewlineOrCarriageReturnIsRefusedAtLoad() throws {
        for (name, text) in [("newline", #""one\ntwo""#), ("return", #""one\rtwo""#)] {
            try expectRefused(
                name,
                """
                summary: x
                processes:
                  copier: { exec: [cat] }
                steps:
                  - send: { to: copier, line: \(text) }
                """, ":5:31:", ["a sent line has no newline or carriage return in it", "send each line with a send step of its own"])
        }
    }

    /// A script that starts a SimulatedFoundation program (as docs/scenarios.md
    /// suggests) links nothing itself: it is started through `groupsim exec`,
    /// which unblocks its signals, so TERM reaches it (Python unblocks none itself).
    @Test func termReachesAWrapperScriptWithAControlChannel() throws {
        _ = try write(
            "wrapper.py",
            """
            #!/usr/bin/env python3
            import signal, subprocess, sys
            child = subprocess.Popen([sys.argv[1], "wait-input"], stdin=subprocess.PIPE)
            def end(*_):
                print("wrapper got TERM", flush=True)
                child.kill()
                sys.exit(7)
            signal.signal(signal.SIGTERM, end)
            print("wrapping", flush=True)
            child.wait()
            """, executable: true)
        let path = try write(
            "wrapper.yaml",
            """
            summary: TERM reaches a wrapper script that serves a control channel through its child
            processes:
              tool: { exec: [./wrapper.py, \(Self.settingsExamples)], control: true }
            steps:
              - launch: tool
              - wait: { for: output, in: tool, matches: "^wrapping$" }
              - set: { in: tool, key: theme, value: dark }
              - kill: { process: tool, signal: TERM }
              - wait: { for: output, in: tool, matches: "^wrapper got TERM$", timeout: 10 }
              - wait: { for: exit, in: tool, status: 7 }
            """)
        let result = try groupsim(["run", path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test func badExecFieldsAreRefusedAtTheirLineAndColumn() throws {
        let refusals: [(String, String, String, [String])] = [
            ("bad-target", "tool: { exec: [cat], target: watch }", ":3:32:", ["target is app, widget or intent", "found 'watch'"]),
            ("role-and-exec", "tool: { exec: [cat], role: widget }", ":3:30:", ["a process has 'role' (a built-in process) or 'exec'"]),
            ("role-target", "app: { role: main-app, target: widget }", ":3:34:", ["'target' goes with 'exec'"]),
            ("role-env", "app: { role: main-app, env: { A: b } }", ":3:31:", ["'env' goes with 'exec'"]),
            ("role-control", "app: { role: main-app, control: true }", ":3:35:", ["'control' goes with 'exec'"]),
            ("role-start-timeout", "app: { role: main-app, start-timeout: 5 }", ":3:41:", ["'start-timeout' goes with 'exec'"]),
            ("env-list", "tool: { exec: [cat], env: { A: [b, c] } }", ":3:34:", ["env values are strings", "found a list for A"]),
            (
                "env-groupsim", "tool: { exec: [cat], env: { GROUPSIM_ROOT: /tmp } }", ":3:46:",
                ["env cannot set GROUPSIM_ROOT", "GROUPSIM_DEVICE, GROUPSIM_BUNDLE_ID", "GROUPSIM_CONTROL_SOCKET", "from the app's manifest"]
            ),
        ]
        for (name, process, location, messages) in refusals {
            try expectRefused(name, "summary: x\nprocesses:\n  \(process)\nsteps:\n  - quit: \(process.prefix { $0 != ":" })\n", location, messages)
        }
        try expectRefused(
            "bad-stream",
            """
            summary: x
            processes:
              copier: { exec: [cat] }
            steps:
              - wait: { for: output, in: copier, matches: x, stream: stdin }
            """, ":5:58:", ["stream is stdout or stderr, found 'stdin'"])
    }

    @Test func aValueDomainOnAnExecutablesChangeIsRefusedAtLoad() throws {
        for (name, step, location) in [
            ("wait", "- wait: { for: change, in: tool, key: theme, value-domain: com.example.notes }", ":5:62:"),
            ("saw", "- expect: { in: tool, saw: change, key: theme, value-domain: com.example.notes }", ":5:64:"),
        ] {
            try expectRefused(
                name,
                """
                summary: x
                processes:
                  tool: { exec: [\(Self.settingsExamples), wait-input] }
                steps:
                  \(step)
                """, location, ["'value-domain' never matches in tool, your own executable", "expect: { in: tool, key: …, domain: … }"])
        }
    }
}
