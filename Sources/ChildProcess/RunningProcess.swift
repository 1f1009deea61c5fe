import Foundation

/// A child process whose stdout is read line by line as it arrives, so the
/// caller can wait for an event (a line) with a timeout instead of sleeping.
/// The child is tied to this process: it is killed when this process ends,
/// however it ends (`OwnerLifetime`).
public final class RunningProcess: @unchecked Sendable {
    public let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var partial = Data()
    private var stdoutClosed = false
    private var stderrData = Data()
    private var stderrClosed = false
    /// Index of the next line `nextLine` returns.
    private var cursor = 0
    private var exited = false
    /// Signalled once at exit, held by the termination handler itself: `deinit` waits on it when `self` can no longer be reached.
    private let exitSignal = DispatchSemaphore(value: 0)

    /// A write to a child that has died must fail, not kill the parent with SIGPIPE.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// `directory`: the child's working folder (nil: this process's).
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil) throws {
        Self.ignoreBrokenPipes
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        // The child ends when this process does, however it ends (OwnerLifetime).
        variables[OwnerLifetime.variable] = String(getpid())
        process.environment = variables
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.terminationHandler = { [weak self, exitSignal] _ in
            exitSignal.signal()
            guard let self else { return }
            self.condition.withLock { self.exited = true }
            self.condition.broadcast()
        }
        try SpawningThread.shared.run { [process] in try process.run() }
        // One reader thread per pipe owns its read end until EOF (and keeps this
        // object alive until then), then closes it: no descriptor is closed while
        // being read, and none outlives its child (a driver that starts
        // hundreds of children must not run out of descriptors).
        let stdoutHandle = stdoutPipe.fileHandleForReading, stderrHandle = stderrPipe.fileHandleForReading
        Thread { [self] in
            while true {
                let chunk = PipeReading.nextChunk(stdoutHandle)
                receive(chunk)
                if chunk.isEmpty { break }
            }
            try? stdoutHandle.close()
        }.start()
        Thread { [self] in
            while true {
                let chunk = PipeReading.nextChunk(stderrHandle)
                condition.withLock {
                    stderrData.append(chunk)
                    if chunk.isEmpty { stderrClosed = true }
                }
                condition.broadcast()
                if chunk.isEmpty { break }
            }
            try? stderrHandle.close()
        }.start()
    }

    public var pid: Int32 { process.processIdentifier }

    private func receive(_ chunk: Data) {
        condition.lock()
        defer { condition.unlock(); condition.broadcast() }
        if chunk.isEmpty {
            stdoutClosed = true
            if !partial.isEmpty { lines.append(String(decoding: partial, as: UTF8.self)); partial = Data() }
            return
        }
        partial.append(chunk)
        while let newline = partial.firstIndex(of: 0x0A) {
            lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
            partial = Data(partial[(newline + 1)...])
        }
    }

    public struct Timeout: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The next line not yet returned, waiting up to `timeout` seconds for it.
    /// nil when stdout closed first.
    public func nextLine(timeout: TimeInterval = 10) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while cursor >= lines.count {
            if stdoutClosed { return nil }
            if !condition.wait(until: deadline) {
                throw Timeout(description: "no output line within \(timeout)s; stderr: \(String(decoding: stderrData, as: UTF8.self))")
            }
        }
        cursor += 1
        return lines[cursor - 1]
    }

    /// Waits for (and consumes up to) the first line satisfying `predicate`.
    @discardableResult
    public func waitForLine(timeout: TimeInterval = 10, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, let line = try nextLine(timeout: remaining) else {
                throw Timeout(description: "expected line not seen within \(timeout)s; seen: \(allLines.suffix(5)); stderr: \(stderr)")
            }
            if predicate(line) { return line }
        }
    }

    public var allLines: [String] { condition.withLock { lines } }
    public var stderr: String { condition.withLock { String(decoding: stderrData, as: UTF8.self) } }

    /// Everything the process wrote to stderr, once it closed its end (up to `timeout`).
    public func completeStandardError(timeout: TimeInterval = 10) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !stderrClosed {
            if !condition.wait(until: deadline) { throw Timeout(description: "process \(pid) kept stderr open for \(timeout)s") }
        }
        return String(decoding: stderrData, as: UTF8.self)
    }

    /// Writes a line to the child's stdin; false if the child is gone (its stdin closed).
    @discardableResult
    public func write(_ line: String) -> Bool {
        (try? stdinPipe.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))) != nil
    }

    public func closeStdin() { try? stdinPipe.fileHandleForWriting.close() }

    public func kill(_ signal: Int32 = SIGKILL) { Foundation.kill(process.processIdentifier, signal) }

    /// Waits for the process to exit (up to `timeout`), returning its status.
    @discardableResult
    public func waitForExit(timeout: TimeInterval = 10) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !exited {
            if !condition.wait(until: deadline) { throw Timeout(description: "process \(pid) did not exit within \(timeout)s") }
        }
        return process.terminationStatus
    }

    /// A child still running when its owner lets go is asked to end
    /// (SIGTERM: it saves what it has) and given a moment, then killed: it
    /// must not outlive its owner, nor write into a folder the owner removes next.
    deinit {
        closeStdin()
        if process.isRunning {
            process.terminate()
            if exitSignal.wait(timeout: .now() + 2) == .timedOut {
                kill(SIGCONT)
                kill(SIGKILL)
            }
        }
    }
}
