import Foundation
import TestSupport
import Testing

/// `RunningProcess`, the one owner of a child: its lines, its end, its signals,
/// and that letting it go ends the child.
@Suite struct RunningProcessTests {
    final class Heard: Sendable {
        // Not a Mutex: Thread Sanitizer does not see its contended path, and the two readers' threads contend.
        let said = UnsafeSendableBox<[String]>([])
        let ended = DispatchSemaphore(value: 0)
    }

    @Test func handlersHearEveryLineInOrderThenTheEnd() throws {
        let heard = Heard()
        let process = try RunningProcess(
            "/bin/sh", ["-c", "echo one; echo warned >&2; printf 'two\\nthree'; exit 3"],
            handlers: .init(
                stdout: { line in heard.said.update { $0.append("out " + line) } },
                stderr: { line in heard.said.update { $0.append("err " + line) } },
                ended: { termination in
                    heard.said.update { $0.append("ended \(termination.map(String.init(describing:)) ?? "unseen")") }
                    heard.ended.signal()
                }))
        #expect(heard.ended.wait(timeout: .now() + 10) == .success)
        let said = heard.said.value
        #expect(said.filter { $0.hasPrefix("out ") } == ["out one", "out two", "out three"])
        #expect(said.contains("err warned"))
        #expect(said.last == "ended exited with status 3")
        #expect(process.standardOutput == "one\ntwo\nthree")
        #expect(process.termination == .exited(3))
    }

    @Test func aSignalEndIsToldApartFromAnExit() throws {
        let process = try RunningProcess("/bin/sh", ["-c", "echo started; read line"])
        try process.waitForLine { $0 == "started" }
        #expect(process.signal(SIGSTOP))
        #expect(process.signal(SIGCONT))
        #expect(process.signal(SIGKILL))
        let ended = try process.waitForTermination()
        #expect(ended == .signalled(SIGKILL))
        #expect(ended.shellStatus == 137)
        // Reaped: its pid may be another process's now, so nothing is sent.
        #expect(!process.signal(SIGKILL))
    }

    /// A child starts with every signal blocked, whichever thread started it
    /// (the package's executables take SIGTERM through a signalfd).
    @Test func aChildStartsWithEverySignalBlocked() throws {
        // grep reads its own mask (the shell, waiting in sigsuspend, would show a passing one).
        let process = try RunningProcess("/bin/sh", ["-c", "exec grep SigBlk /proc/self/status"])
        let line = try #require(try process.nextLine())
        let mask = try #require(UInt64(line.split(separator: "\t").last ?? "", radix: 16), "\(line)")
        for blocked in [SIGINT, SIGTERM, SIGHUP, SIGUSR1] { #expect(mask & (1 << UInt64(blocked - 1)) != 0, "signal \(blocked) in \(line)") }
        #expect(try process.waitForTermination() == .exited(0))
    }

    /// The reader threads hold what they share, never the `RunningProcess`:
    /// one let go while its child runs is deinitialized, and ends the child
    /// (a child that ignores SIGTERM, and lives a minute at most should this fail).
    @Test func lettingGoOfAProcessEndsItsChild() throws {
        var pid: Int32 = 0
        do {
            let process = try RunningProcess("/bin/sh", ["-c", "trap '' TERM; echo tick; exec sleep 60"])
            try process.waitForLine { $0 == "tick" }
            pid = process.pid
        }
        // The deinit has run: SIGTERM (ignored here), then SIGKILL after two seconds.
        let deadline = Date().addingTimeInterval(10)
        while kill(pid, 0) == 0 && Date() < deadline { usleep(10_000) }
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "child \(pid) outlived its RunningProcess")
    }

    /// A child that leads a group of its own: whatever it started, and what
    /// that started, ends with it, one that ignores SIGTERM too (after
    /// `groupGrace`), before its end is reported, so its output closes.
    @Test func aChildsOwnChildrenEndWithItWhenItLeadsAGroup() throws {
        let process = try RunningProcess(
            "/bin/sh", ["-c", "sleep 1000 & echo $!; sh -c 'trap \"\" TERM; sleep 1000 & echo $!; wait' & read line; exit 3"], ownGroup: true)
        let children = try [process.nextLine(), process.nextLine()].map { try #require($0.flatMap(Int32.init)) }
        defer { for pid in children where Self.runs(pid) { kill(pid, SIGKILL) } }
        #expect(process.group == ProcessGroup(id: process.pid))
        #expect(children.allSatisfy { ProcessGroup.status(of: $0)?.group == process.pid })
        process.closeStdin()
        #expect(try process.waitForTermination(timeout: 30) == .exited(3))
        #expect(process.waitForOutputToClose(timeout: 10))
        #expect(children.filter(Self.runs).isEmpty, "still running: \(children.filter(Self.runs))")
    }

    /// `signalGroup` reaches what the child started; `signal`, the child alone.
    @Test func signalGroupReachesWhatTheChildStarted() throws {
        let process = try RunningProcess("/bin/sh", ["-c", "sleep 1000 & echo $!; wait"], ownGroup: true)
        let child = try #require(try process.nextLine().flatMap(Int32.init))
        defer { if Self.runs(child) { kill(child, SIGKILL) } }
        #expect(process.signalGroup(SIGKILL))
        #expect(try process.waitForTermination() == .signalled(SIGKILL))
        #expect(!Self.runs(child))
        #expect(!process.signalGroup(SIGKILL))
    }

    /// `catchUpOutput` returns once every byte the child had written is read and split into lines: after its end
    /// (seen by the reaper, not the readers), all of a large output is in, past several reads of the pipe.
    @Test func catchingUpReadsEverythingTheChildWrote() throws {
        let process = try RunningProcess("/bin/sh", ["-c", "seq 1 20000"])
        #expect(try process.waitForTermination() == .exited(0))
        #expect(process.catchUpOutput())
        #expect(process.allLines.count == 20_000)
        #expect(process.allLines.last == "20000")
        // With nothing left to read, and with a reader waiting for bytes that do not come, it returns at once.
        #expect(process.catchUpOutput())
        let idle = try RunningProcess("/bin/sh", ["-c", "echo up; read line; exit 0"])
        try idle.waitForLine { $0 == "up" }
        #expect(idle.catchUpOutput())
        idle.closeStdin()
        #expect(try idle.waitForTermination() == .exited(0))
    }

    /// The test seam that holds what the readers read until someone catches up: a snapshot taken without
    /// catching up misses the line every time; catching up hands it over.
    @Test func heldOutputIsHandedOverWhenACallerCatchesUp() throws {
        let process = try RunningProcess("/bin/sh", ["-c", "echo first; echo warned >&2"], environment: ["CHILDPROCESS_TEST_HOLD_OUTPUT": "1"])
        #expect(try process.waitForTermination() == .exited(0))
        #expect(process.allLines.isEmpty)
        #expect(process.catchUpOutput())
        #expect(process.allLines == ["first"])
        #expect(process.stderr == "warned\n")
    }

    /// Whether `pid` runs (a zombie has ended: init reaps it when it will).
    static func runs(_ pid: Int32) -> Bool { ProcessGroup.status(of: pid).map { !$0.ended } ?? false }

    /// `stop()` returns once the child is stopped: a line sent then is not
    /// echoed until SIGCONT, and `stop()` on an ended child says so.
    @Test func stopReturnsOnceTheChildIsStopped() throws {
        let child = try RunningProcess("/bin/cat", [])
        #expect(child.write("before"))
        try child.waitForLine(timeout: 10) { $0 == "before" }
        #expect(child.stop())
        let stat = try String(contentsOfFile: "/proc/\(child.pid)/stat", encoding: .utf8)
        #expect(stat.contains(") T "), "\(stat)")
        #expect(child.write("while stopped"))
        #expect(child.signal(SIGCONT))
        try child.waitForLine(timeout: 10) { $0 == "while stopped" }
        child.closeStdin()
        _ = try child.waitForExit()
        #expect(!child.stop())
    }
}
