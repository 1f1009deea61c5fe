import Foundation
import Guarded

#if canImport(Glibc)
    import Glibc
#endif

/// The one owner of a child process: it starts the child, reads its stdout
/// and stderr line by line as they arrive (so a caller waits for an event
/// with a timeout instead of sleeping), writes its stdin, signals it, waits
/// for its end and reaps it. The child is tied to this process: it is killed
/// when this process ends, however it ends (`OwnerLifetime`), and asked to
/// end when its `RunningProcess` is let go (see `deinit`). A child that may
/// start children of its own (a user's program) leads a process group of its
/// own (`ownGroup`), which is ended with it.
///
/// Lines are kept (`nextLine`, `waitForLine`, `allLines`, `stderr`) and, if
/// the starter gave `handlers`, also handed to them one at a time on the
/// reader threads, in the order they were written; `ended` comes once, after
/// the last line of both streams and the child's end.
package final class RunningProcess: Sendable {
    /// Foundation's `Process` is used from this object's methods and its
    /// termination handler only, and is not changed after `run()`.
    private let child = Process()
    private let stdinPipe = Pipe()
    /// The write end of `stdinPipe`, from `run()` on.
    private let input: ChildInput
    /// Everything the reader threads and the termination handler share with
    /// the caller. They hold it, never `self`: a `RunningProcess` let go
    /// while its child runs reaches its `deinit`, which ends the child.
    private let output: Output
    /// The readers of stdout and stderr, each the one owner of its pipe's read end.
    private let readers: [PipeReader]
    package let pid: Int32
    /// The group the child leads (`ownGroup`); nil: it is signalled alone.
    package let group: ProcessGroup?

    /// How long what is left of a child's group (`ownGroup`) has, once the
    /// child has ended, to end on SIGTERM before it is killed.
    package static let groupGrace: TimeInterval = 2

    /// A write to a child that has died must fail, not kill the parent with SIGPIPE.
    private static let ignoreBrokenPipes: Void = { Glibc.signal(SIGPIPE, SIG_IGN) }()

    /// `environment` is added to this process's; `directory` is the child's
    /// working folder (nil: this process's). With `keepsOutput: false` the
    /// lines go to `handlers` only (a starter that bounds what it keeps of a
    /// child that may flood its output); `nextLine`, `allLines` and `stderr` then have none.
    /// With a `lineLimit`, a line longer than that many bytes is handed over in
    /// pieces of it, so a child that writes without newlines costs bounded memory.
    /// With `unblockedSignals`, the child starts with no signal blocked and
    /// every signal's default action (`CleanSpawn`): a program that links no
    /// code of this package to unblock them (`StartingSignalMask`).
    /// With `ownGroup` (which starts it so too), the child leads a process
    /// group of its own, which whatever it starts joins (`ProcessGroup`):
    /// `signalGroup`, `kill` and `deinit` reach them all, and once the child
    /// has ended, what is left of its group is ended (`ProcessGroup.endMembers`,
    /// `groupGrace`) before its end is reported, so a program's children never
    /// outlive it (nor hold its output open). `warden`, if given, ends the
    /// group should this process end first, which `OwnerLifetime` does only
    /// for the child itself (see `Warden`).
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
        handlers: Handlers? = nil, keepsOutput: Bool = true, lineLimit: Int? = nil, unblockedSignals: Bool = false, ownGroup: Bool = false,
        warden: Warden? = nil
    ) throws {
        Self.ignoreBrokenPipes
        let output = Output(handlers: handlers, keepsOutput: keepsOutput, lineLimit: lineLimit)
        self.output = output
        var variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        // The child ends when this process does, however it ends (OwnerLifetime), if it asks to.
        variables[OwnerLifetime.variable] = String(getpid())
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        if unblockedSignals || ownGroup {
            pid = try Self.startClean(
                executable, arguments, variables, directory: directory, pipes: (stdinPipe, stdoutPipe, stderrPipe), output: output,
                ownGroup: ownGroup, warden: warden)
            group = ownGroup ? ProcessGroup(id: pid) : nil
        } else {
            child.executableURL = URL(fileURLWithPath: executable)
            child.arguments = arguments
            child.environment = variables
            if let directory { child.currentDirectoryURL = URL(fileURLWithPath: directory) }
            child.standardInput = stdinPipe
            child.standardOutput = stdoutPipe
            child.standardError = stderrPipe
            child.terminationHandler = { ended in
                let termination: Termination =
                    ended.terminationReason == .uncaughtSignal ? .signalled(ended.terminationStatus) : .exited(ended.terminationStatus)
                output.finish(termination)
            }
            try SpawningThread.shared.run { [child] in try child.run() }
            pid = child.processIdentifier
            group = nil
        }
        input = ChildInput(stdinPipe.fileHandleForWriting)
        // One reader thread per pipe owns its read end until EOF, then closes
        // it: no descriptor is closed while being read, and none outlives its
        // child (a driver that starts hundreds of children must not run out
        // of descriptors). `PipeReader.holdVariable` is a test seam.
        let (holds, pid) = (environment[PipeReader.holdVariable] == "1", pid)
        readers = [(Output.Stream.stdout, stdoutPipe.fileHandleForReading), (.stderr, stderrPipe.fileHandleForReading)].map { stream, handle in
            PipeReader(handle, name: "groupsim.child-\(pid)-\(stream)", holds: holds) { output.receive($0, from: stream) }
        }
    }

    /// Waits until everything the child had written to stdout and stderr when
    /// this is called has been read and handed over as lines (a last line
    /// with no newline yet stays unfinished): a check after the child said on
    /// another channel that it wrote sees what it wrote. False if `timeout` passed first.
    package func catchUpOutput(timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return readers.allSatisfy { $0.catchUp(before: deadline) }
    }

    /// Starts the child with `CleanSpawn` (from the spawning thread, as every
    /// child) on the pipes' ends, and a thread that waits for its end, ends
    /// what is left of its group (`ownGroup`), then reaps it and reports its end.
    private static func startClean(
        _ executable: String, _ arguments: [String], _ variables: [String: String], directory: String?,
        pipes: (stdin: Pipe, stdout: Pipe, stderr: Pipe), output: Output, ownGroup: Bool, warden: Warden?
    ) throws -> pid_t {
        let descriptors = [
            pipes.stdin.fileHandleForReading.fileDescriptor, pipes.stdout.fileHandleForWriting.fileDescriptor,
            pipes.stderr.fileHandleForWriting.fileDescriptor,
        ]
        let pid = try SpawningThread.shared.run {
            try CleanSpawn.start(executable, arguments, environment: variables, directory: directory, newGroup: ownGroup, defaultActions: true) {
                actions in
                for (target, descriptor) in descriptors.enumerated() { posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(target)) }
            }
        }
        // The child's ends are its own now: the readers see end of file when it (and its children) close them.
        try? pipes.stdin.fileHandleForReading.close()
        try? pipes.stdout.fileHandleForWriting.close()
        try? pipes.stderr.fileHandleForWriting.close()
        let group = ownGroup ? ProcessGroup(id: pid) : nil
        if let group { warden?.watch(group) }
        let reaper = Thread {
            // Its zombie keeps its pid, and its group's id, from any other process until it is reaped, under the lock
            // that `signal` takes: no signal meant for it or its group can reach a process that got the number since.
            guard CleanSpawn.waitUntilEnded(pid) else {
                // Reaped by someone else; it has ended all the same.
                return output.finish(.signalled(SIGKILL))
            }
            if let group {
                group.endMembers(grace: groupGrace)
                // Before the reap: once reaped, the id may be another group's, which the warden must never end.
                warden?.release(group)
            }
            output.finishReaping(pid)
        }
        reaper.name = "groupsim.child-\(pid)-end"
        reaper.start()
        return pid
    }

    /// The next stdout line not yet returned, waiting up to `timeout` seconds
    /// for it; nil when stdout closed first.
    package func nextLine(timeout: TimeInterval = 10) throws -> String? {
        try output.nextLine(timeout: timeout)
    }

    /// Waits for (and consumes up to) the first stdout line satisfying `predicate`.
    @discardableResult
    package func waitForLine(timeout: TimeInterval = 10, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, let line = try nextLine(timeout: remaining) else {
                throw ChildProcessError.lineNotSeen(seconds: timeout, seen: Array(allLines.suffix(5)), stderr: stderr)
            }
            if predicate(line) { return line }
        }
    }

    /// Every stdout line so far.
    package var allLines: [String] { output.withState { $0.lines } }
    /// Everything written to stdout so far, as written (a last line with no newline has none).
    package var standardOutput: String {
        output.withState { state in
            state.lines.joined(separator: "\n") + (state.lines.isEmpty || state.stdoutEndedMidLine ? "" : "\n")
        }
    }
    /// Everything written to stderr so far.
    package var stderr: String { output.withState { String(decoding: $0.stderrData, as: UTF8.self) } }

    /// Everything the process wrote to stderr, once it closed its end (up to `timeout`).
    package func completeStandardError(timeout: TimeInterval = 10) throws -> String {
        guard output.wait(timeout: timeout, until: { $0.stderrClosed }) else {
            throw ChildProcessError.stderrKeptOpen(pid: pid, seconds: timeout)
        }
        return stderr
    }

    /// Writes a line to the child's stdin, waiting for room as long as it
    /// takes; false if the child is gone (its stdin closed).
    @discardableResult
    package func write(_ line: String) -> Bool {
        input.write(Data((line + "\n").utf8), timeout: nil) == .written
    }

    /// Writes bytes as they are to the child's stdin; false if the child is gone.
    @discardableResult
    package func write(bytes: Data) -> Bool {
        input.write(bytes, timeout: nil) == .written
    }

    /// Writes bytes to the child's stdin, waiting at most `timeout` seconds for
    /// the child to take them: one that never reads (or is stopped) cannot hold the caller.
    package func write(_ bytes: Data, within timeout: TimeInterval) -> InputWrite {
        input.write(bytes, timeout: timeout)
    }

    package func closeStdin() { input.close() }

    /// Waits until the child (and whatever it left holding them) closed stdout
    /// and stderr, up to `timeout`; false if they are still open.
    package func waitForOutputToClose(timeout: TimeInterval) -> Bool {
        output.wait(timeout: timeout) { $0.stdoutClosed && $0.stderrClosed }
    }

    /// Sends `signal` (SIGSTOP, SIGCONT, SIGTERM, SIGKILL …) to the child.
    /// False once its end was seen: it has been reaped, and its pid may be
    /// another process's by now.
    @discardableResult
    package func signal(_ signal: Int32) -> Bool {
        output.unlessReaped { Foundation.kill(pid, signal) == 0 }
    }

    /// Sends `signal` to the child's whole group (`ownGroup`: the child and
    /// whatever it started that stayed in the group), or to the child alone if
    /// it has no group of its own. False once the child's end was seen.
    @discardableResult
    package func signalGroup(_ signal: Int32) -> Bool {
        output.unlessReaped { group?.signal(signal) ?? (Foundation.kill(pid, signal) == 0) }
    }

    /// SIGSTOP, and returns once the child is stopped: the kernel stops a
    /// process at its next return to user space, so without the wait a
    /// request sent right after could still be answered. False if the child
    /// has ended, or is not seen stopped within `timeout` (its state, in
    /// /proc/PID/stat, is read every millisecond meanwhile: nothing notifies
    /// anyone but its parent's waitpid, which the reaper owns).
    @discardableResult
    package func stop(timeout: TimeInterval = 10) -> Bool {
        guard signal(SIGSTOP) else { return false }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, termination == nil {
            if Self.isStopped(pid) { return true }
            usleep(1_000)
        }
        return false
    }

    /// Whether /proc says the process is stopped (state T, or t when traced).
    static func isStopped(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return false }
        let state = stat[afterName.upperBound...].first
        return state == "T" || state == "t"
    }

    /// How the child ended; nil while it runs (or its end is not yet seen).
    package var termination: Termination? { output.withState { $0.termination } }

    package var isRunning: Bool { termination == nil }

    /// Waits for the child's end (up to `timeout`).
    @discardableResult
    package func waitForTermination(timeout: TimeInterval = 10) throws -> Termination {
        var ended: Termination?
        guard
            output.wait(
                timeout: timeout,
                until: {
                    ended = $0.termination
                    return ended != nil
                }), let ended
        else {
            throw ChildProcessError.didNotExit(pid: pid, seconds: timeout)
        }
        return ended
    }

    /// Waits for the child's end (up to `timeout`), returning its exit
    /// status, or the number of the signal that ended it (`waitForTermination`
    /// tells the two apart).
    @discardableResult
    package func waitForExit(timeout: TimeInterval = 10) throws -> Int32 {
        switch try waitForTermination(timeout: timeout) {
        case .exited(let status), .signalled(let status): status
        }
    }

    /// Sends SIGKILL (with SIGCONT, should it be stopped) to the child, and
    /// its group if it leads one (`ownGroup`), and waits for the end (up to
    /// `timeout`); returns how it ended, nil if not seen in time.
    @discardableResult
    package func kill(timeout: TimeInterval = 10) -> Termination? {
        signalGroup(SIGCONT)
        signalGroup(SIGKILL)
        return try? waitForTermination(timeout: timeout)
    }

    /// A child still running when its owner lets go is asked to end
    /// (SIGTERM: it saves what it has; to its group too, if it leads one) and
    /// given a moment, then killed: it must not outlive its owner, nor write
    /// into a folder the owner removes next.
    deinit {
        closeStdin()
        guard signalGroup(SIGTERM) else { return }
        if (try? waitForTermination(timeout: 2)) == nil {
            signalGroup(SIGCONT)
            signalGroup(SIGKILL)
        }
    }

    /// The state shared by the caller, the reader threads and the termination handler.
    /// Unchecked Sendable: `state` is read and changed only under its lock.
    private final class Output: @unchecked Sendable {
        enum Stream: Sendable { case stdout, stderr }

        struct State {
            var lines: [String] = []
            /// Index of the next line `nextLine` returns.
            var cursor = 0
            var partial: [Stream: Data] = [:]
            var stdoutClosed = false
            /// The last stdout line had no newline.
            var stdoutEndedMidLine = false
            var stderrData = Data()
            var stderrClosed = false
            var termination: Termination?
            /// Dropped once `ended` is called, so what they hold is let go.
            var handlers: Handlers?
            var keepsOutput = true
            var lineLimit: Int?
        }

        /// Each change wakes the waiters.
        private let state: LockedCondition<State>

        init(handlers: Handlers?, keepsOutput: Bool, lineLimit: Int?) {
            state = LockedCondition(State(handlers: handlers, keepsOutput: keepsOutput, lineLimit: lineLimit))
        }

        /// Runs `body` on the state under the lock, then wakes the waiters.
        func withState<T>(_ body: (inout State) -> T) -> T {
            state.withLock(body)
        }

        func receive(_ chunk: Data, from stream: Stream) {
            let (complete, handlers) = withState { state -> ([String], Handlers?) in
                var data = state.partial[stream, default: Data()]
                data.append(chunk)
                var complete: [String] = []
                // One pass over the new bytes only (what was left before holds no newline), one copy of
                // what is left: a child flooding its output costs linear time.
                var start = data.startIndex
                var searched = data.endIndex - chunk.count
                while let newline = Self.newline(in: data, from: searched) {
                    complete.append(String(decoding: data[start..<newline], as: UTF8.self))
                    start = newline + 1
                    searched = start
                }
                if let limit = state.lineLimit, limit > 0 {
                    while data.endIndex - start > limit {
                        complete.append(String(decoding: data[start..<(start + limit)], as: UTF8.self))
                        start += limit
                    }
                }
                if start != data.startIndex { data = Data(data[start...]) }
                if chunk.isEmpty, !data.isEmpty {
                    complete.append(String(decoding: data, as: UTF8.self))
                    data = Data()
                    if stream == .stdout { state.stdoutEndedMidLine = true }
                }
                state.partial[stream] = data
                if state.keepsOutput {
                    switch stream {
                    case .stdout: state.lines += complete
                    case .stderr: state.stderrData.append(chunk)
                    }
                }
                return (complete, state.handlers)
            }
            for line in complete {
                switch stream {
                case .stdout: handlers?.stdout(line)
                case .stderr: handlers?.stderr(line)
                }
            }
            // Closed only once its last line was handed over, so `ended` comes after it.
            if chunk.isEmpty {
                withState { state in
                    switch stream {
                    case .stdout: state.stdoutClosed = true
                    case .stderr: state.stderrClosed = true
                    }
                }
            }
            if chunk.isEmpty { endIfDone() }
        }

        /// The index of the first newline of `data` at or after `index` (memchr: fast in debug builds too).
        static func newline(in data: Data, from index: Data.Index) -> Data.Index? {
            guard index < data.endIndex else { return nil }
            let offset = index - data.startIndex
            let found: Int? = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
                guard let base = bytes.baseAddress, let hit = memchr(base + offset, 0x0A, bytes.count - offset) else { return nil }
                return UnsafeRawPointer(hit) - base
            }
            return found.map { data.startIndex + $0 }
        }

        func finish(_ termination: Termination) {
            withState { $0.termination = termination }
            endIfDone()
        }

        /// Reaps the child, which has ended (`CleanSpawn.waitUntilEnded`), and
        /// records how, in one step under the lock `unlessReaped` takes.
        func finishReaping(_ pid: pid_t) {
            withState { $0.termination = CleanSpawn.waitForEnd(of: pid) ?? .signalled(SIGKILL) }
            endIfDone()
        }

        /// `send`'s answer while the child's end is not recorded (false after):
        /// for a child `finishReaping` reaps, its pid is its own all along.
        func unlessReaped(_ send: () -> Bool) -> Bool {
            withState { $0.termination == nil && send() }
        }

        /// Calls `ended` once, when both streams are closed and the end is known.
        private func endIfDone() {
            let handlers = withState { state -> Handlers? in
                guard state.stdoutClosed, state.stderrClosed, state.termination != nil else { return nil }
                defer { state.handlers = nil }
                return state.handlers
            }
            handlers?.ended(withState { $0.termination })
        }

        func nextLine(timeout: TimeInterval) throws -> String? {
            var line: String?
            var closed = false
            let arrived = wait(timeout: timeout) { state in
                if state.cursor < state.lines.count {
                    line = state.lines[state.cursor]
                    state.cursor += 1
                    return true
                }
                closed = state.stdoutClosed
                return closed
            }
            if let line { return line }
            if closed { return nil }
            guard arrived else {
                // The last lines read say where the child stopped, which the timeout alone does not.
                let (stderr, last) = withState { (String(decoding: $0.stderrData, as: UTF8.self), $0.lines.suffix(8).joined(separator: "\n")) }
                throw ChildProcessError.noOutputLine(seconds: timeout, lastLines: last, stderr: stderr)
            }
            return nil
        }

        /// Waits until `condition` holds (it may change the state it is given); false if `timeout` passed first.
        func wait(timeout: TimeInterval, until condition: (inout State) -> Bool) -> Bool {
            state.wait(atMost: timeout, for: { condition(&$0) ? true : nil }) ?? false
        }
    }
}
