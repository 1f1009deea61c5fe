import ChildProcess
import Foundation
import Guarded

/// Every child process the runner started, so an interrupted run ends them all
/// (a user's program with its process group: what it started too).
/// It holds them weakly and signals them through `RunningProcess`, never by
/// pid: a child already reaped is not signalled (its pid may be another
/// process's by now), and one whose owner let go is ended by its `deinit`.
/// Unchecked Sendable: the processes and the interrupting signal are under `lock`; the signal sources are made once, under it too.
package final class LiveProcesses: @unchecked Sendable {
    package static let shared = LiveProcesses()
    private let lock = Locked()
    private var processes: [ObjectIdentifier: Entry] = [:]
    private var interruptedBy: Int32?
    nonisolated(unsafe) private var sources: [DispatchSourceSignal] = []

    private struct Entry {
        weak var process: RunningProcess?
    }

    /// A process started while the run is being interrupted is killed at once.
    /// The ones that ended or were let go are dropped here, so the list stays as long as what runs.
    func add(_ process: RunningProcess) {
        let late = lock.withLock { () -> Bool in
            processes = processes.filter { $0.value.process?.isRunning == true }
            processes[ObjectIdentifier(process)] = Entry(process: process)
            return interruptedBy != nil
        }
        if late { process.signalGroup(SIGKILL) }
    }

    /// Kills (and resumes) every child still running; returns how many there were.
    @discardableResult
    package func endAll() -> Int {
        let all = lock.withLock { processes.values.compactMap(\.process) }
        var ended = 0
        for process in all {
            process.signalGroup(SIGCONT)
            if process.signalGroup(SIGKILL) { ended += 1 }
        }
        return ended
    }

    /// The signal (SIGINT, SIGTERM) that interrupted the run, if one did.
    package var interruption: Int32? { lock.withLock { interruptedBy } }

    /// Throws if the run was interrupted: nothing new starts after a stop request.
    func checkNotInterrupted() throws {
        if let signal = interruption { throw ScenarioRunError.check("\(Self.interruptedPrefix) by \(Self.describe(signal)) before this step") }
    }

    /// How the report's failure of an interrupted scenario begins.
    package static let interruptedPrefix = "interrupted"

    /// The signal's name, for reports.
    package static func describe(_ signal: Int32) -> String {
        signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
    }

    /// On SIGINT/SIGTERM: resume and kill every child, then call `finish`
    /// with the signal (by default: exit with 128 + the signal, 130 or 143).
    /// A second signal exits at once.
    package func endAllOnInterrupt(then finish: @escaping @Sendable (Int32) -> Void = { exit(128 + $0) }) {
        lock.withLock {
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [self] in
                    let again = lock.withLock { () -> Bool in
                        defer { if interruptedBy == nil { interruptedBy = number } }
                        return interruptedBy != nil
                    }
                    let ended = endAll()
                    if again { exit(128 + number) }
                    FileHandle.standardError.write(Data("\ninterrupted (\(Self.describe(number))): ended \(ended) simulated process(es)\n".utf8))
                    finish(number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
