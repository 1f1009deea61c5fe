import Foundation
import Guarded

/// A serial executor with a thread of its own: its jobs run one at a time,
/// in the order they came, on that thread. Work that blocks (a file lock's
/// bounded wait, fsync, a caller waiting on a semaphore) runs here instead
/// of on the cooperative pool, whose few threads (one per core) every task
/// of the process shares: a blocked pool thread holds up everyone, and a
/// pool whose threads all wait for a task that needs one never moves again.
///
/// As an actor's executor (`SyncAgent`) it keeps the actor's file work on
/// the thread; as a task's executor preference (`CloudClient.blocking`) it
/// runs the task and its child tasks there.
/// Unchecked Sendable: the queue of jobs is touched only under `condition`; the thread only runs what it took from it.
package final class OwnThreadExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private let state: JobQueue

    /// Starts the thread; it ends once the executor is released and its last job has run.
    package init(name: String) {
        let state = JobQueue()
        self.state = state
        let thread = Thread { state.runUntilClosed() }
        thread.name = name
        thread.start()
    }

    deinit { state.close() }

    package func enqueue(_ job: consuming ExecutorJob) {
        state.append(UnownedJob(job), on: self)
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// The jobs waiting for an `OwnThreadExecutor`'s thread.
/// Unchecked Sendable: the jobs and the flag are reached only through `state`'s lock.
private final class JobQueue: @unchecked Sendable {
    private struct State {
        var jobs: [(job: UnownedJob, executor: Unmanaged<OwnThreadExecutor>)] = []
        var closed = false
    }
    private let state = LockedCondition(State())

    /// The executor is kept alive while a job of its waits (its `deinit` must not run on its own thread with jobs queued).
    func append(_ job: UnownedJob, on executor: OwnThreadExecutor) {
        state.withLock { $0.jobs.append((job, Unmanaged.passRetained(executor))) }
    }

    func close() {
        state.withLock { $0.closed = true }
    }

    /// The thread's body: takes what is queued, runs it in order, and waits for more.
    func runUntilClosed() {
        while true {
            let batch = state.wait(atMost: nil) { state in
                guard state.jobs.isEmpty else {
                    defer { state.jobs.removeAll(keepingCapacity: true) }
                    return state.jobs
                }
                return state.closed ? [] : nil
            }
            guard let batch, !batch.isEmpty else { return }
            for (job, executor) in batch {
                let owner = executor.takeRetainedValue()
                job.runSynchronously(isolatedTo: owner.asUnownedSerialExecutor(), taskExecutor: owner.asUnownedTaskExecutor())
            }
        }
    }
}
