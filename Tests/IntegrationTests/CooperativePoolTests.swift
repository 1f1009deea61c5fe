import CloudClient
import CloudDevice
import CloudService
import Foundation
import GroupDefaults
import PropertyList
import TestSupport
import Testing

/// The cloud's blocking work stays off the cooperative pool, whose threads
/// (one per core) every task of a process shares: more blocked callers than
/// the pool has threads must not stop the process. Real cloud, real sockets,
/// real file locks.
///
/// The tasks these tests start run at `.high` priority: every test of this
/// process runs at `.medium`, on the pool of that priority, and a task started
/// there waits behind every test still queued for it (on a loaded machine,
/// for minutes). A task of another priority has a pool of its own, which
/// nothing else here uses, so it starts at once and only this test's own
/// blocked callers can fill that pool.
extension CloudProcessTests {
    /// More synchronous callers than the pool has threads, each waiting in
    /// `CloudClient.blocking` on a pool thread: every request is answered.
    /// (Before, the requests' tasks needed a pool thread too, and none came.)
    @Test func moreBlockingCallersThanPoolThreadsAreAllAnswered() throws {
        let server = try startCloud()
        let endpoint = try endpoint()
        let callers = ProcessInfo.processInfo.activeProcessorCount + 2
        let answered = UnsafeSendableBox(0)
        let finished = DispatchGroup()
        for _ in 0..<callers {
            finished.enter()
            Task.detached(priority: .high) {
                defer { finished.leave() }
                let status = try? CloudClient.blocking { try await CloudClient.request(endpoint, path: CloudClient.Path.status) }
                if status?.dictionaryValue != nil { answered.update { $0 += 1 } }
            }
        }
        // Waited for on this thread, not the pool's: a stuck pool cannot hide the failure.
        #expect(finished.wait(timeout: .now() + 60) == .success, "the blocking callers were not answered within 60 s")
        #expect(answered.value == callers)
        withExtendedLifetime(server) {}
    }

    /// Sync agents whose copies' locks are held (an app committing, or
    /// stopped in the middle of a commit) wait for them on their own
    /// threads: meanwhile the process's other tasks still run. (Before, each
    /// waiting agent held a pool thread for up to the lock timeout.)
    @Test func agentsWaitingForACopysLockLeaveThePoolFree() throws {
        let store = "com.example.kvs"
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let devices = (0..<count).map { DeviceCloud(root: simulation, device: "device\($0)") }
        var lockPaths: Set<String> = []
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        for cloud in devices {
            // Signed in, with a copy of no account yet: the agent's first act is a transaction on the copy.
            try cloud.updateSettings { settings in
                settings.account = "alice"
                settings.stores = [store]
            }
            let copy = URL(fileURLWithPath: try cloud.storePath(store))
            try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
            let lockPath = copy.deletingLastPathComponent().path + "/." + copy.lastPathComponent + ".lock"
            let descriptor = open(lockPath, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
            try #require(descriptor >= 0 && flock(descriptor, LOCK_EX) == 0, "could not lock \(lockPath): errno \(errno)")
            held.append(descriptor)
            lockPaths.insert(lockPath)
        }
        let problems = UnsafeSendableBox<[String]>([])
        let runs = try devices.map { cloud in
            let agent = try SyncAgent(cloud: cloud) { event, fields in
                if event == "problem" { problems.update { $0.append(PlistJSON.encode(.dictionary(fields))) } }
            }
            return Task.detached(priority: .high) { await agent.run() }
        }
        defer { for run in runs { run.cancel() } }

        // An agent waiting for a copy's lock has the lock file open: wait until one does.
        let deadline = Date().addingTimeInterval(20)
        while openDescriptors(to: lockPaths) <= held.count {
            try #require(Date() < deadline, "no agent came to wait for its copy's lock within 20 s")
            usleep(2_000)
        }
        let ran = DispatchSemaphore(value: 0)
        Task.detached(priority: .high) { ran.signal() }
        #expect(ran.wait(timeout: .now() + 60) == .success, "a task of the process did not run within 60 s")
        #expect(problems.value.isEmpty, "the agents gave up waiting for their locks before a task of the process could run: \(problems.value)")
    }

    /// How many of this process's descriptors are open on one of `paths`.
    private func openDescriptors(to paths: Set<String>) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)).map(paths.contains) ?? false
        }.count
    }
}
