import AppProtocol
import Foundation
import TestSupport
import Testing

/// A child of `RunningProcess` ends with the process that started it
/// (`OwnerLifetime`; kill -9 of a real run: `ScenarioRunnerTests`), and not
/// before: the kernel ties the parent-death signal to the thread that
/// started the child, so a child started from a thread that then ends (a
/// dispatch worker that retires, a run's thread) must live on.
@Suite struct OwnerLifetimeTests {
    let root = TemporaryRoot()

    /// Unchecked Sendable: written by the starting thread before it signals `done`, read by the test after waiting on it.
    final class Started: @unchecked Sendable {
        var app: Result<AppProcess, Error>?
        var thread = ""
    }

    @Test func aChildOutlivesTheThreadThatStartedIt() throws {
        let started = Started()
        let done = DispatchSemaphore(value: 0)
        Thread { [root] in
            // "PID/task/TID": this thread's entry, which goes once the kernel is done with the thread.
            started.thread = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
            started.app = Result { try AppProcess("main-app", root: root) }
            done.signal()
        }.start()
        done.wait()
        let app = try #require(try started.app?.get())
        #expect(started.thread.contains("/task/"))
        let deadline = Date().addingTimeInterval(10)
        while FileManager.default.fileExists(atPath: "/proc/" + started.thread) && Date() < deadline { usleep(1_000) }
        #expect(!FileManager.default.fileExists(atPath: "/proc/" + started.thread), "the starting thread did not end")
        // The thread is gone; the app must still answer.
        #expect(try app.request(.ping).ok)
        app.closeInput()
        #expect(try app.waitForExit() == 0)
    }
}
