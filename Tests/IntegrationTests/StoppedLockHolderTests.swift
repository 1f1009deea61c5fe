import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// A writer stopped (SIGSTOP) while it holds a suite's lock: every other
/// process waits a bounded time, then fails naming it, keeps its change
/// pending, answers `ping` meanwhile, and stops promptly on SIGTERM.
@Suite struct StoppedLockHolderTests {
    let root = TemporaryRoot()

    /// `groupsim` in this test's root, killed (and failing the test) if it hangs.
    func tool(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try groupsimBounded(arguments, root: root, environment: environment)
    }
    let group = "group.com.example.notes"

    func onDisk() throws -> [String: PlistValue] {
        guard let data = FileManager.default.contents(atPath: root.groupSuitePath(group)) else { return [:] }
        return try PropertyListFormat.decodeDictionary(data)
    }

    @Test func theDefaultsToolGivesUpNamingTheHolder() throws {
        let holder = try StoppedLockHolder(root: root, domain: group)
        let write = try tool(["defaults", "write", group, "k", "v"], environment: ["GROUPSIM_LOCK_TIMEOUT": "0.5"])
        #expect(write.status == 1)
        #expect(write.stderr.contains("gave up waiting for the lock '"))
        #expect(write.stderr.contains("process \(holder.pid) (groupsim-stress) holds it"))
        #expect(write.stderr.contains("kill -CONT \(holder.pid)"))
        #expect(try onDisk()["k"] == nil)
        try holder.end()
        #expect(try tool(["defaults", "write", group, "k", "v"]).status == 0)
    }

    @Test func theAppAnswersPingWhileACommandWaitsForTheLock() throws {
        let main = try AppProcess("main-app", root: root, environment: ["GROUPSIM_LOCK_TIMEOUT": "60", "GROUPSIM_DEFER_COMMITS": "1"])
        let holder = try StoppedLockHolder(root: root, domain: group)
        try main.set("theme", "dark")
        let sync = main.send(.synchronize)
        let alive = main.send(.ping)
        let pong = try main.response(id: alive)
        #expect(pong.ok)
        #expect(!main.unconsumed.contains { if case .response(let response) = $0 { response.fields["id"] == sync } else { false } })
        try holder.end()
        let synchronized = try main.response(id: sync)
        #expect(synchronized.ok)
        #expect(try onDisk()["theme"] == "dark")
        main.closeInput()
        #expect(try main.waitForExit() == 0)
    }

    /// A driver that floods requests meets a full pipe, not a growing app:
    /// while a command waits for the lock, the app reads at most
    /// `queuedRequestLimit` requests ahead of it, so a ping sent behind more
    /// than that is read, and answered, only once some of them are done.
    @Test func anAppReadsAtMostItsQueueOfRequestsAhead() throws {
        let main = try AppProcess("main-app", root: root, environment: ["GROUPSIM_LOCK_TIMEOUT": "60", "GROUPSIM_DEFER_COMMITS": "1"])
        let holder = try StoppedLockHolder(root: root, domain: group)
        try main.set("theme", "dark")
        let sync = main.send(.synchronize)
        let beyond = 100
        let gets = (0..<ControlProtocol.queuedRequestLimit + beyond).map { _ in main.send(.get(key: "theme")) }
        let alive = main.send(.ping)
        // Read at once, the ping would be answered now, with the worker still held by the lock.
        #expect(throws: (any Error).self) { try main.response(id: alive, timeout: 3) }
        try holder.end()
        #expect(try main.response(id: alive, timeout: 60).ok)
        let answeredFirst = main.unconsumed.filter { if case .response = $0 { true } else { false } }.count
        #expect(answeredFirst >= beyond)
        #expect(try main.response(id: sync).ok)
        for id in gets { #expect(try main.response(id: id).value == "dark") }
        main.closeInput()
        #expect(try main.waitForExit() == 0)
    }

    @Test func theAppsCommandsFailNamingTheHolderAndTheChangeStaysPending() throws {
        let main = try AppProcess("main-app", root: root, environment: ["GROUPSIM_LOCK_TIMEOUT": "0.5", "GROUPSIM_DEFER_COMMITS": "1"])
        let holder = try StoppedLockHolder(root: root, domain: group)
        try main.set("theme", "dark")
        let synchronize = try main.request(.synchronize)
        #expect(!synchronize.ok)
        #expect(synchronize.error?.contains("process \(holder.pid) (groupsim-stress) holds it") == true)
        let increment = try main.request(.increment(key: "count", by: 1))
        #expect(!increment.ok)
        #expect(increment.error?.contains("process \(holder.pid) (groupsim-stress) holds it") == true)
        #expect(try main.get("theme").value == "dark")
        try holder.end()
        #expect(try main.request(.synchronize).ok)
        #expect(try onDisk()["theme"] == "dark")
        #expect(try main.request(.increment(key: "count", by: 1)).value == 1)
        main.closeInput()
        #expect(try main.waitForExit() == 0)
    }

    /// The set's own commit already waits for the lock when `synchronize`
    /// comes: the answer comes one lock wait after the set, not two (the
    /// synchronize does not start a whole wait of its own behind it). At
    /// exit, every commit-failed warning comes before the exit event, which
    /// is the last line: the save at exit is not tried again after it.
    @Test func synchronizeBehindAWaitingCommitAnswersWithinOneLockWaitAndExitIsSaidLast() throws {
        let main = try AppProcess("main-app", root: root, environment: ["GROUPSIM_LOCK_TIMEOUT": "1"])
        let holder = try StoppedLockHolder(root: root, domain: group)
        let setAt = Date()
        try main.set("theme", "dark")
        let synchronize = try main.request(.synchronize)
        let waited = Date().timeIntervalSince(setAt)
        #expect(!synchronize.ok)
        #expect(synchronize.error?.contains("process \(holder.pid) (groupsim-stress) holds it") == true)
        // One wait is 1 s; two, as before, 2 s or more.
        #expect(waited < 1.9, "synchronize answered \(waited) s after the set")
        main.closeInput()
        #expect(try main.waitForExit() == 74)
        while try main.process.nextLine(timeout: 10) != nil {}
        let messages = main.process.allLines.compactMap { try? ControlProtocol.decode($0).message }
        let events = messages.compactMap { message -> AppEvent? in if case .event(let event, _) = message { event } else { nil } }
        guard case .exit(let status)? = events.last else {
            Issue.record("the last event is not the exit: \(events.suffix(3))")
            return
        }
        #expect(status == 74)
        let exitCount = events.filter { if case .exit = $0 { true } else { false } }.count
        #expect(exitCount == 1)
        let lastFailure = events.dropLast().last { if case .warning(let kind, _) = $0 { kind == "commit-failed" } else { false } }
        if case .warning(_, let message)? = lastFailure {
            #expect(message.contains("could not save domain \(group)"), "\(message)")
        } else {
            Issue.record("no commit-failed warning before the exit event: \(events)")
        }
        #expect(try onDisk()["theme"] == nil)
        try holder.end()
    }

    @Test func anExtensionStopsPromptlyOnSIGTERMAndSaysWhatWasNotSaved() throws {
        let holder = try StoppedLockHolder(root: root, domain: group)
        let intent = try AppProcess(
            "intent-extension", root: root, arguments: ["SetLastNote", "text=hello"], environment: ["GROUPSIM_LOCK_TIMEOUT": "60"])
        // Its own change event: the value is set and pending, its commit waiting for the lock.
        try intent.change("lastNote") { $0 == "hello" }
        intent.process.signal(SIGTERM)
        let warning = try intent.warning(kind: "commit-failed")
        #expect(warning.message.contains("without saving domain \(group)"))
        #expect(try intent.exitEvent() == 143)
        #expect(try intent.waitForExit() == 143)
        #expect(try onDisk()["lastNote"] == nil)
        try holder.end()
    }
}
