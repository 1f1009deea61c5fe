import Foundation
import TestSupport
import Testing

/// An `exec:` program (or a `run` command) that starts children of its own:
/// they end with it and with the scenario, however the run ends (its normal
/// end, SIGTERM or SIGINT of the runner, kill -9 of the runner), and the
/// scenario's root goes with them.
extension ExecProcessTests {
    /// Starts two children that keep running (sleep, and a shell that starts a
    /// sleep of its own: a child that forks again), writes their pids to
    /// PIDFILE, says "started", then echoes its input until it ends, as a tool
    /// does. MODE: "holds-output" (the children keep the program's stdout and
    /// stderr open), "closed" (they close them), "ignores-term" (they keep them
    /// open and ignore SIGTERM).
    static let programWithChildren = """
        #!/usr/bin/env python3
        import os, signal, subprocess, sys
        pidfile, mode = sys.argv[1], sys.argv[2]
        options = {"stdin": subprocess.DEVNULL}
        if mode == "closed":
            options.update(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if mode == "ignores-term":
            options["preexec_fn"] = lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen(["sleep", "1000"], **options)
        read, write = os.pipe()
        subprocess.Popen(["sh", "-c", f"sleep 1000 & echo $! >&{write}; wait"], pass_fds=[write], **options)
        os.close(write)
        grandchild = os.read(read, 64).decode().strip()
        with open(pidfile + ".tmp", "w") as file:
            file.write(f"{child.pid} {grandchild}\\n")
        os.rename(pidfile + ".tmp", pidfile)
        print("started", flush=True)
        for line in sys.stdin:
            print(line, end="", flush=True)
        """

    /// A scenario whose `tool` is `programWithChildren`, waiting `then` after it started.
    func scenarioWithChildren(_ name: String, pidfile: String, mode: String, then: String = "") throws -> String {
        _ = try write("with-children.py", Self.programWithChildren, executable: true)
        return try write(
            name + ".yaml",
            """
            summary: a program that starts children of its own
            processes:
              tool: { exec: [./with-children.py, \(pidfile), \(mode)] }
            steps:
              - launch: tool
              - wait: { for: output, in: tool, matches: "^started$" }
            \(then)
            """)
    }

    /// The pids `programWithChildren` wrote, once it has (nil if it has not).
    static func children(in pidfile: String) -> [Int32]? {
        guard let text = try? String(contentsOfFile: pidfile, encoding: .utf8) else { return nil }
        return text.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
    }

    /// Whether `pid` runs: a zombie has ended (init reaps it when it will).
    static func isRunning(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// Kills what a failed test left running (only sleeps: a pid that ended may be another process's by now).
    static func endLeftovers(_ pids: [Int32]) {
        for pid in pids where isRunning(pid) {
            guard let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), command.starts(with: Array("sleep".utf8))
            else { continue }
            kill(pid, SIGKILL)
        }
    }

    /// The scenario roots left in `tmp`.
    static func scenarioRoots(in tmp: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []).filter { $0.hasPrefix("groupsim-scenario-") }
    }

    /// A scenario that ends as usual ends the program's children too (a child
    /// that keeps the program's output open used to hold the teardown for 12 s,
    /// then stay running; one that ignores SIGTERM is killed after a moment).
    @Test(arguments: ["holds-output", "closed", "ignores-term"])
    func aProgramsChildrenEndWithTheScenario(mode: String) throws {
        let pidfile = folder.path + "/pids-\(mode)"
        let path = try scenarioWithChildren("children-\(mode)", pidfile: pidfile, mode: mode)
        defer { Self.endLeftovers(Self.children(in: pidfile) ?? []) }
        let result = try groupsim(["run", path])
        let children = try #require(Self.children(in: pidfile), "\(result.stdout)\(result.stderr)")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(children.count == 2)
        #expect(children.filter(Self.isRunning).isEmpty, "still running: \(children.filter(Self.isRunning))")
        #expect(Self.scenarioRoots(in: folder.path + "/tmp").isEmpty)
    }

    /// A `run` command's own children end with it: the step ends when the
    /// command does (it used to wait its 60 s for a child that kept the
    /// command's output open, and fail), and the child is gone.
    @Test func aRunCommandsChildrenEndWithIt() throws {
        let pidfile = folder.path + "/pids-run"
        let path = try write(
            "run-child.yaml",
            """
            summary: a command that leaves a child behind
            steps:
              - run: { args: [sh, -c, "sleep 1000 & echo $! > \(pidfile); echo started"], output: started }
            """)
        defer { Self.endLeftovers(Self.children(in: pidfile) ?? []) }
        let result = try groupsim(["run", path], limit: 45)
        let children = try #require(Self.children(in: pidfile), "\(result.stdout)\(result.stderr)")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(children.filter(Self.isRunning).isEmpty, "still running: \(children.filter(Self.isRunning))")
    }

    /// Starts `groupsim run` on a scenario whose program started its children and then waits long, with TMPDIR a folder
    /// of its own; returns the runner, that folder and the children's pids.
    func runnerWithChildren(_ name: String) throws -> (runner: RunningProcess, tmp: String, children: [Int32]) {
        let tmp = folder.path + "/tmp-\(name)"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let pidfile = folder.path + "/pids-\(name)"
        let path = try scenarioWithChildren(
            name, pidfile: pidfile, mode: "holds-output", then: #"  - wait: { for: output, in: tool, matches: "^never$", timeout: 120 }"#)
        let runner = try RunningProcess(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"])
        try runner.waitForLine { $0.hasPrefix("Running 1 scenario") }
        // Under the whole suite's load, starting a program can take long.
        let deadline = Date().addingTimeInterval(60)
        while Self.children(in: pidfile) == nil && Date() < deadline { _ = try? runner.nextLine(timeout: 0.05) }
        let children = try #require(Self.children(in: pidfile), "no children started; stderr: \(runner.stderr)")
        return (runner, tmp, children)
    }

    /// SIGTERM or SIGINT of the runner ends the program's children, the
    /// runner ends as usual (its summary, its status) instead of giving up
    /// after its 20 s, and the scenario's root is removed.
    @Test(arguments: [SIGTERM, SIGINT])
    func interruptingTheRunnerEndsAProgramsChildrenAndRemovesTheRoot(signal: Int32) throws {
        let (runner, tmp, children) = try runnerWithChildren("interrupted-\(signal)")
        defer { Self.endLeftovers(children) }
        #expect(Self.scenarioRoots(in: tmp).count == 1)
        runner.signal(signal)
        #expect(try runner.waitForExit(timeout: 60) == 128 + signal)
        while try runner.nextLine(timeout: 10) != nil {}
        let output = runner.allLines.joined(separator: "\n")
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(output.contains("interrupted by \(name)"), "\(output)\n\(runner.stderr)")
        #expect(!runner.stderr.contains("did not end within"), "\(runner.stderr)")
        #expect(Self.scenarioRoots(in: tmp).isEmpty, "\(Self.scenarioRoots(in: tmp))")
        #expect(children.filter(Self.isRunning).isEmpty, "still running: \(children.filter(Self.isRunning))")
    }

    /// kill -9 of the runner, which no handler of its own sees: its warden ends
    /// the program's children (the program itself ends through the kernel) and
    /// removes the scenario's root, says so on the runner's stderr, then closes it.
    @Test func killingTheRunnerEndsAProgramsChildrenAndRemovesTheRoot() throws {
        let (runner, tmp, children) = try runnerWithChildren("killed")
        defer { Self.endLeftovers(children) }
        let roots = Self.scenarioRoots(in: tmp)
        #expect(roots.count == 1)
        runner.signal(SIGKILL)
        #expect(try runner.waitForExit() == SIGKILL)
        #expect(runner.waitForOutputToClose(timeout: 30), "the runner's stderr stayed open: \(runner.stderr)")
        #expect(Self.scenarioRoots(in: tmp).isEmpty, "\(Self.scenarioRoots(in: tmp))")
        #expect(children.filter(Self.isRunning).isEmpty, "still running: \(children.filter(Self.isRunning))")
        for root in roots { #expect(runner.stderr.contains("removed \(tmp)/\(root)"), "\(runner.stderr)") }
    }
}
