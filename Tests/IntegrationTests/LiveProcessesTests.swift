import ChildProcess
import Foundation
import TestSupport
import Testing

@testable import Scenarios

/// `LiveProcesses`, what an interrupted run ends: it signals only children
/// still running, through their `RunningProcess`, never a bare pid.
@Suite struct LiveProcessesTests {
    @Test func endAllKillsOnlyTheChildrenStillRunning() throws {
        let live = LiveProcesses()
        let running = try RunningProcess("/bin/sh", ["-c", "echo up; exec sleep 60"])
        let ended = try RunningProcess("/bin/sh", ["-c", "exit 0"])
        live.add(running)
        live.add(ended)
        try running.waitForLine { $0 == "up" }
        #expect(try ended.waitForTermination() == .exited(0))
        do {
            // Let go: its own deinit ends it; the list holds it weakly and must not keep it.
            let dropped = try RunningProcess("/bin/sh", ["-c", "exec sleep 60"])
            live.add(dropped)
        }
        // The reaped child's pid may be another process's by now: only the running one is signalled.
        #expect(live.endAll() == 1)
        #expect(try running.waitForTermination() == .signalled(SIGKILL))
    }
}
