import Foundation

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
/// Unchecked Sendable: every stored property is read and written under `condition`.
private final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [(job: UnownedJob, executor: Unmanaged<OwnThreadExecutor>)] = []
    private var closed = false

    /// The executor is kept alive while a job of its waits (its `deinit` must not run on its own thread with jobs queued).
    func append(_ job: UnownedJob, on executor: OwnThreadExecutor) {
        condition.withLock {
            jobs.append((job, Unmanaged.passRetained(executor)))
            condition.signal()
        }
    }

    func close() {
        condition.withLock {
            closed = true
            condition.signal()
        }
    }

    /// The thread's body: takes what is queued, runs it in order, and waits for more.
    func runUntilClosed() {
        while true {
            condition.lock()
            while jobs.isEmpty && !closed { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for (job, executor) in batch {
                let owner = executor.takeRetainedValue()
                job.runSynchronously(isolatedTo: owner.asUnownedSerialExecutor(), taskExecutor: owner.asUnownedTaskExecutor())
            }
        }
    }
}
