import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

@testable import GroupDefaults

/// Changes travelling between real processes through files and inotify.
@Suite struct PropagationTests {
    let root = TemporaryRoot()
    let group = "group.com.example.shared"

    func write(_ words: [String]) throws {
        let result = try groupsim(["defaults", "write", group] + words, root: root)
        #expect(result.status == 0, "\(result.stderr)")
    }

    func library(_ bundle: String = "com.example.app", process: ProcessDomains = ProcessDomains()) throws -> GroupDefaults {
        try GroupDefaults(
            suiteName: group,
            context: DefaultsContext(root: SimulationRoot(path: root.path), device: "iPhone", bundleIdentifier: bundle, appGroups: [group]),
            processDomains: process)
    }

    @Test func setRemoveAndWholeDomainChangesReachAnotherProcess() throws {
        let watcher = try WatchProcess(root: root, domain: group)
        let defaults = try library()
        defaults.set("dark", forKey: "theme")
        let set = try #require(watcher.waitForChange("theme", to: "dark").last)
        #expect(set.origin == "other-process")
        #expect(set.valueDomain == group)

        defaults.removeObject(forKey: "theme")
        try watcher.waitForChange("theme", to: nil)

        try defaults.setPersistentDomain(["a": 1, "b": 2], forName: group)
        try watcher.waitForChange("a", to: 1)
        try watcher.waitForChange("b", to: 2)

        try defaults.removePersistentDomain(forName: group)
        let removed = try watcher.waitForChange("b", to: nil)
        #expect(removed.contains { $0.key == "a" && $0.new == nil })
        try watcher.stop()
    }

    @Test func writingTheSameValueNotifiesNobody() throws {
        let watcher = try WatchProcess(root: root, domain: group)
        try write(["k", "v"])
        try watcher.waitForChange("k", to: "v")
        try write(["k", "v"])
        try write(["k", "v"])
        try write(["marker", "1"])
        let between = try watcher.waitForChange("marker", to: "1")
        #expect(between.filter { $0.key == "k" }.isEmpty, "\(between)")
        try watcher.stop()
    }

    @Test func hiddenKeysAreSilentAndRemovalsRevealLowerValues() throws {
        let process = ProcessDomains()
        process.setLaunchArguments(["-hidden", "from-argument"])
        process.register(["revealed": "registered-default"])
        let defaults = try library(process: process)
        let changes = ChangeLog()
        let observation = defaults.observe(nil) { changes.append($0) }
        defer { observation.cancel() }

        try write(["hidden", "on-disk"])
        try write(["revealed", "stored"])
        try changes.wait { $0.key == "revealed" && $0.new == "stored" }
        #expect(defaults.string(forKey: "hidden") == "from-argument")
        #expect(!changes.all.contains { $0.key == "hidden" })

        let delete = try groupsim(["defaults", "delete", group, "revealed"], root: root)
        #expect(delete.status == 0)
        let revealed = try changes.wait { $0.key == "revealed" && $0.old == "stored" }
        #expect(revealed.new == "registered-default")
        #expect(revealed.valueDomain == "NSRegistrationDomain")
        #expect(revealed.origin == .otherProcess)
    }

    @Test func theDidChangeNotificationIsForThisProcessOnly() throws {
        let defaults = try library()
        let posted = ChangeLog()
        let token = NotificationCenter.default.addObserver(forName: GroupDefaults.didChangeNotification, object: defaults, queue: nil) { _ in
            posted.appendMarker()
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let changes = ChangeLog()
        let observation = defaults.observe("k") { changes.append($0) }
        defer { observation.cancel() }

        try write(["k", "from-elsewhere"])
        try changes.wait { $0.new == "from-elsewhere" && $0.origin == .otherProcess }
        #expect(posted.markers == 0)
        defaults.set("mine", forKey: "k")
        #expect(posted.markers == 1)  // posted synchronously, on this thread
        try changes.wait { $0.new == "mine" && $0.origin == .thisProcess }
    }

    @Test func aProcessDoesNotHearItsOwnCommitsAsExternal() throws {
        let defaults = try library()
        let changes = ChangeLog()
        let observation = defaults.observe(nil) { changes.append($0) }
        defer { observation.cancel() }
        for index in 0..<20 {
            defaults.set(.integer(Int64(index)), forKey: "own")
            try defaults.flush()  // each a commit, each an inotify event for this process too
        }
        // A later write by another process: once it arrives, every reload of the
        // files before it has been announced (changes are delivered in order).
        try write(["marker", "1"])
        try changes.wait { $0.key == "marker" }
        #expect(changes.all.filter { $0.key == "own" }.count == 20)
        #expect(changes.all.filter { $0.key == "own" && $0.origin == .otherProcess }.isEmpty)
    }

    /// The watcher does not read a file again when one that left the name was
    /// replaced (an exchange): it must still read when the name was left empty.
    @Test func aFileMovedAwayOrMovedBackIsSeenByAnotherProcess() throws {
        let watcher = try WatchProcess(root: root, domain: group)
        try write(["theme", "dark"])
        try watcher.waitForChange("theme", to: "dark")
        let path = root.groupSuitePath(group)
        let aside = root.path + "/aside.plist"
        #expect(rename(path, aside) == 0, "\(String(cString: strerror(errno)))")
        try watcher.waitForChange("theme", to: nil)
        #expect(rename(aside, path) == 0, "\(String(cString: strerror(errno)))")
        try watcher.waitForChange("theme", to: "dark")
        try watcher.stop()
    }

    @Test func threeWritersAndTwoObserversAgreeWithTheFile() throws {
        let observers = try (0..<2).map { _ in try WatchProcess(root: root, domain: group) }
        var commands: [[String]] = (0..<3).map { ["write-keys", "--domain", group, "--prefix", "w\($0)", "--count", "300"] }
        commands += (0..<3).map { _ in ["write-loop", "--domain", group, "--key", "contended", "--count", "100"] }
        for result in try runConcurrently(commands, executable: "groupsim-stress", root: root) { #expect(result.status == 0, "\(result.stderr)") }
        try write(["marker", "done"])

        let file = try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath(group))))
        #expect(file.count == 900 + 2 + 1)
        for observer in observers {
            var view: [String: PlistValue] = [:]
            for change in try observer.waitForChange("marker", to: "done") {
                view[change.key] = change.new
            }
            #expect(view == file)
            try observer.stop()
        }
    }

    @Test(arguments: Durability.allCases)
    func aKilledWriterDoesNotStallTheOthers(durability: Durability) throws {
        try root.setDurability(durability)
        let watcher = try WatchProcess(root: root, domain: group)
        for round in 0..<10 {
            let victim = try RunningProcess(
                BuiltExecutable.path("groupsim-stress"), ["write-loop", "--domain", group, "--key", "victim"],
                environment: ["GROUPSIM_ROOT": root.path])
            try victim.waitForLine { $0.hasPrefix("ack ") }
            victim.signal(SIGKILL)
            try victim.waitForExit()
            try write(["survivor", "-int", "\(round)"])
            try watcher.waitForChange("survivor", to: .integer(Int64(round)))
        }
        try watcher.stop()
    }

    @Test func anOverflowedQueueIsRecoveredByAFullReload() throws {
        let watcher = try WatchProcess(root: root, domain: group, heldUntilInput: true)
        // Two events per commit (the exchange's IN_MOVED_FROM and IN_MOVED_TO): enough commits to overflow the kernel's queue.
        let limit =
            Int(
                (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
        let commits = limit / 2 + 1000
        let burst = try groupsimStress(["write-loop", "--domain", group, "--key", "n", "--count", "\(commits)"], root: root)
        #expect(burst.status == 0)
        watcher.process.write("resume")
        // The overflow notice and the final value may come in either order.
        var sawOverflow = false
        var sawFinal = false
        try watcher.nextLine { line in
            if line.isOverflow { sawOverflow = true }
            if let change = line.change, change.key == "n", change.new == .integer(Int64(commits)) { sawFinal = true }
            return sawOverflow && sawFinal
        }
        try watcher.stop()
    }

    @Test func aCorruptReplacementIsReportedThenRecovered() throws {
        let watcher = try WatchProcess(root: root, domain: group)
        try write(["k", "before"])
        try watcher.waitForChange("k", to: "before")
        let path = root.groupSuitePath(group)
        try Data("not a plist".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        let warning = try watcher.warning()
        #expect(warning.message.contains("not a valid property-list dictionary"))
        try write(["k", "after"])
        try watcher.waitForChange("k", to: "after")
        try watcher.stop()
    }

    @Test func aDeviceErasedUnderRunningProcessesIsFollowed() throws {
        let watcher = try WatchProcess(root: root, domain: group)
        try write(["k", "before"])
        try watcher.waitForChange("k", to: "before")
        for round in 0..<3 {
            try FileManager.default.removeItem(atPath: root.path + "/devices")
            try watcher.waitForChange("k", to: nil)
            try write(["k", "-int", "\(round)"])
            try watcher.waitForChange("k", to: .integer(Int64(round)))
        }
        try watcher.stop()
    }
}

/// Observer callbacks collected for a test, waited on with a timeout.
/// Unchecked Sendable: the changes and markers are read and changed under `condition`'s lock.
final class ChangeLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var changes: [DefaultsChange] = []
    private(set) var markers = 0

    func append(_ change: DefaultsChange) {
        condition.withLock { changes.append(change) }
        condition.broadcast()
    }

    func appendMarker() { condition.withLock { markers += 1 } }

    var all: [DefaultsChange] { condition.withLock { changes } }

    @discardableResult
    func wait(timeout: TimeInterval = 20, for predicate: (DefaultsChange) -> Bool) throws -> DefaultsChange {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let match = changes.first(where: predicate) { return match }
            if !condition.wait(until: deadline) {
                throw TestFailure("no matching change within \(timeout)s; saw \(changes)")
            }
        }
    }
}

extension PropagationTests {
    /// The watcher stops promptly from another thread; a domain open through the stop, and one opened after, are watched again
    /// (in a process of its own: libinotifytools' state is process-wide).
    @Test func theWatcherStopsPromptlyAndStartsAgain() throws {
        let process = try RunningProcess(
            BuiltExecutable.path("groupsim-stress"), ["watcher-restart", "--domain", group, "--key", "phase"],
            environment: ["GROUPSIM_ROOT": root.path])
        try process.waitForLine { $0 == "ready 1" }
        try write(["phase", "-int", "1"])
        try process.waitForLine { $0 == "seen 1" }
        let stopped = try process.waitForLine { $0.hasPrefix("stopped in ") }
        #expect(stopped.hasSuffix("watcher threads 0"), "\(stopped)")
        // The domain that stayed open through the stop is watched again.
        try process.waitForLine { $0 == "ready 2" }
        try write(["phase", "-int", "2"])
        try process.waitForLine { $0 == "seen 2" }
        // A domain opened after a stop starts the watcher too.
        try process.waitForLine { $0 == "ready 3" }
        try write(["phase", "-int", "3"])
        try process.waitForLine { $0 == "seen 3" }
        #expect(try process.waitForExit() == 0)
    }

    /// When inotify cannot start, the process goes on (values stay readable)
    /// and nobody waiting on the watcher waits forever.
    @Test func aWatcherThatCannotStartLeavesNoOneWaiting() throws {
        let process = try RunningProcess(
            BuiltExecutable.path("groupsim-stress"), ["watcher-unavailable", "--domain", group],
            environment: ["GROUPSIM_ROOT": root.path, "TMPDIR": root.path + "/no-such-folder"])
        try process.waitForLine(timeout: 30) { $0 == "idle true" }
        try process.waitForLine(timeout: 30) { $0 == "paused and resumed" }
        #expect(try process.waitForExit() == 0)
        #expect(try process.completeStandardError().contains("cannot create the watcher's wake file"))
    }

    /// libinotifytools waits with select(), which aborts a process for a
    /// descriptor at or above FD_SETSIZE: such a process goes on without
    /// propagation, saying why, instead of crashing.
    @Test func aProcessWithTooManyDescriptorsWarnsInsteadOfCrashing() throws {
        let result = try groupsimStress(["watcher-with-many-descriptors", "--domain", group], root: root)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("written with"))
        #expect(result.stderr.contains("libinotifytools can only wait on one below \(FD_SETSIZE)"), "\(result.stderr)")
        #expect(try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath(group))))["k"] == "written")
    }
}
