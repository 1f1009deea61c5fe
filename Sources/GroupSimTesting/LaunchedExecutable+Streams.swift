import ChildProcess
import Foundation
import Scenarios

/// A program's standard streams, its end and the signals a test sends it:
/// what every launched executable has, with or without a control channel.
extension LaunchedExecutable {
    /// Waits for the next line of the program's `stream` (standard output by
    /// default; standard error, or either) after those an earlier wait of that
    /// stream consumed, that the regular expression `pattern` matches; returns it.
    /// Only the last 2,000 lines (1 MiB) are kept, as the runner keeps them: a
    /// failure says how many earlier ones were dropped.
    /// - Parameters:
    ///   - pattern: A regular expression (ICU syntax) the line must match.
    ///   - stream: Which stream to read: `.standardOutput`, `.standardError` or `.either`.
    ///   - timeout: How long to wait at most.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when `pattern` is not a regular expression, or no matching line comes within `timeout` or before the output ends.
    /// - Returns: The line, taken with the ones before it: a later wait of that stream starts after it.
    @discardableResult
    public func waitForOutput(
        matching pattern: String, stream: StandardStream = .standardOutput, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> String
    {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let expression: NSRegularExpression
        do { expression = try NSRegularExpression(pattern: pattern) } catch {
            throw outcome.failure("'\(pattern)' is not a regular expression: \(error)", at: place)
        }
        let seconds = timeout.seconds
        return try await Blocking.run { [record, outcome, name] in
            // NSRegularExpression is not Sendable: it is used on this thread only.
            let found = record.takeLine(of: stream, timeout: seconds) { text in
                expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
            }
            if let found { return found }
            throw outcome.failure(
                "\(name): no line of its \(stream.description) matching '\(pattern)' within \(seconds) s" + Self.outputSummary(record), at: place)
        }
    }

    /// The last lines of the program's output, and how many were dropped, for a failure message.
    static func outputSummary(_ record: ProgramRecord) -> String {
        let kept = record.keptOutput
        let last = kept.lines.suffix(5).map { "[\($0.stream.rawValue)] \($0.text.prefix(300))" }
        let dropped =
            kept.dropped > 0
            ? "; \(kept.dropped) of its \(kept.total) output lines were dropped (only the last \(OutputBuffer.maximumLines) lines "
                + "or \(OutputBuffer.maximumBytes >> 20) MiB are kept)" : ""
        return dropped + "; its last lines: "
            + (last.isEmpty
                ? "none (its standard output is a pipe: a program that does not flush, fflush(nil), keeps its lines in its buffer)"
                : last.joined(separator: " | "))
    }

    /// What the program wrote to standard output, line by line: the last 2,000 lines (1 MiB) of its output.
    /// Everything it had written when this is read is in (its pipe is read first, for at most 10 s): a line written
    /// before the program said ready, or before an answer or an event this test waited for, is there.
    public var standardOutputLines: [String] {
        catchUpOutput()
        return record.lines(of: .stdout)
    }
    /// What the program wrote to standard error, line by line, kept and caught up as `standardOutputLines` is.
    public var standardErrorLines: [String] {
        catchUpOutput()
        return record.lines(of: .stderr)
    }

    /// Reads what is in the program's pipes before a snapshot of its output. It waits on the reader threads, which
    /// take microseconds, never on the program; the bound is only for a reader that hangs.
    func catchUpOutput() { _ = process.catchUpOutput(timeout: 10) }

    /// What the program wrote to standard output, line by line.
    @available(*, deprecated, renamed: "standardOutputLines")
    public var output: [String] { standardOutputLines }
    /// What the program wrote to standard error, as one text (each line with its newline).
    @available(*, deprecated, message: "use standardErrorLines, lines as standardOutputLines gives them")
    public var standardError: String {
        catchUpOutput()
        return record.standardError
    }

    /// Writes `line` and a newline to the program's standard input, waiting at most `timeout` for the program to take
    /// it (a program that does not read fills its pipe), as the scenario step `send` does. A line with a newline in it
    /// is refused: send each line with a call of its own.
    /// - Parameters:
    ///   - line: The line, without a newline.
    ///   - timeout: How long to wait at most for the program to take it.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - callLine: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the line has a newline in it, the program closed its standard input, or it did not take the line within `timeout`.
    public func sendLine(
        _ line: String, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line callLine: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: callLine, column: column)
        guard !line.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else {
            throw outcome.failure("\(name): a sent line has no newline in it (one is added): send each line with a call of its own", at: place)
        }
        let seconds = timeout.seconds
        try await Blocking.run { [process, outcome, name] in
            switch process.write(Data((line + "\n").utf8), within: seconds) {
            case .written: return
            case .closed: throw outcome.failure("\(name) has closed its standard input (it ended?): cannot send '\(line)'", at: place)
            case .timedOut(let unwritten):
                throw outcome.failure(
                    "\(name) did not take the line within \(seconds) s (\(unwritten) bytes unwritten): it does not read its standard input, "
                        + "or is suspended", at: place)
            }
        }
    }

    /// Writes `line` and a newline to the program's standard input, without waiting.
    /// - Parameters:
    ///   - line: The line, without a newline.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - callLine: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program has closed its standard input.
    @available(*, deprecated, message: "use sendLine(_:), which is async and waits for the program to take the line")
    public func sendInput(_ line: String, fileID: String = #fileID, filePath: String = #filePath, line callLine: Int = #line, column: Int = #column)
        throws
    {
        guard process.write(line) else {
            throw outcome.failure(
                "\(name) has closed its standard input (it ended?): cannot send '\(line)'",
                at: SourcePlace(fileID: fileID, filePath: filePath, line: callLine, column: column))
        }
    }

    /// Closes the program's standard input (it reads end of file).
    public func closeInput() { process.closeStdin() }

    /// Waits for the program to end; returns its status as a shell shows it
    /// (128 + the signal for a death by signal: 137 after `kill()`). With
    /// `status`, a different one is a failure.
    /// - Parameters:
    ///   - expected: The status it must end with (nil: any).
    ///   - timeout: How long to wait at most.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when it still runs after `timeout`, or ends with another status than `expected`.
    /// - Returns: Its status as a shell shows it (128 + the signal for a death by signal).
    @discardableResult
    public func waitForExit(
        status expected: Int32? = nil, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> Int32 {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let seconds = timeout.seconds
        let ended = try await Blocking.run { [process, record, outcome, name] in
            let started = Date()
            do {
                let ended = try process.waitForTermination(timeout: seconds)
                // Its last lines too, so `output` is complete once this returns.
                record.waitForOutputEnd(timeout: min(5, max(0, seconds - Date().timeIntervalSince(started))))
                return ended
            } catch {
                throw outcome.failure("\(name) was still running after \(seconds) s" + Self.outputSummary(record), at: place)
            }
        }
        if let expected, ended.shellStatus != expected {
            throw outcome.failure(
                "\(name) \(ended) (status \(ended.shellStatus)), not status \(expected); stderr: \(record.standardError.suffix(500))", at: place)
        }
        return ended.shellStatus
    }

    /// Whether the program is still running (its end not yet seen).
    public var isRunning: Bool { process.isRunning }

    // MARK: Faults

    /// `kill -9`: the program ends at once, saving nothing it had pending.
    /// Returns once its end is seen.
    /// - Parameters:
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when its end is not seen within 10 s.
    public func kill(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let ended = await (try? Blocking.run { [process] in process.kill(timeout: 10) }) ?? nil
        guard ended != nil else { throw outcome.failure("\(name) was not seen to end within 10 s of SIGKILL", at: place) }
    }

    /// A reboot of its device: a program with a control channel is asked to exit, saving what it wrote first (as
    /// cfprefsd holds an app's writes on a device); any other gets SIGTERM; SIGKILL 10 s later if it is still there.
    /// Returns once its end is seen.
    func endForReboot(of device: String, at place: SourcePlace) async throws {
        // Its answer is not waited for: a program already ending may not give it.
        let asked = send(.exit(status: 0))
        let ended =
            await
            (try? Blocking.run { [process] () -> RunningProcess.Termination? in
                if !asked { _ = process.signal(SIGTERM) }
                return (try? process.waitForTermination(timeout: 10)) ?? process.kill(timeout: 10)
            }) ?? nil
        guard ended != nil else { throw outcome.failure("\(name) did not end within 20 s of the reboot of \(device)", at: place) }
    }

    /// SIGTERM: the program ends as its own handling of the signal decides
    /// (by default it ends at once, as iOS ends an app). `waitForExit` waits for it.
    /// - Parameters:
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when it has ended already.
    public func terminate(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) throws {
        try signal(SIGTERM, "SIGTERM", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// SIGSTOP: the program stops where it is (holding any lock it holds) until `resume()`.
    /// Returns once the program is stopped, so a request sent next is not answered.
    /// - Parameters:
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when it has ended, or is not seen stopped within 10 s.
    public func suspend(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        guard process.stop() else {
            throw outcome.failure(
                "cannot stop \(name) with SIGSTOP: "
                    + (process.termination.map { "it has ended (\($0.description))" } ?? "it was not seen stopped within 10 s"),
                at: place)
        }
        record.isSuspended = true
    }

    /// SIGCONT: a suspended program goes on.
    /// - Parameters:
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when it has ended already.
    public func resume(fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column) throws {
        try signal(SIGCONT, "SIGCONT", at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
        record.isSuspended = false
    }

    private func signal(_ number: Int32, _ signalName: String, at place: SourcePlace) throws {
        guard process.signal(number) else {
            throw outcome.failure("cannot send \(signalName) to \(name): it has ended (\(process.termination.map(\.description) ?? "?"))", at: place)
        }
    }

    /// Whether the program's iCloud store is in use (its target has the entitlement).
    var hasKeyValueStore: Bool { info["icloudKVS"] != nil }
}
