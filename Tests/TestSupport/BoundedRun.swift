import Foundation

/// A run that did not end in time: the process was killed and the test fails
/// with this, instead of hanging the whole test run.
package struct HungProcess: Error, CustomStringConvertible {
    package let description: String
}

/// Runs an executable to completion like `runProcess`, but kills it and
/// throws `HungProcess` if it has not finished within `timeout` seconds.
/// `readerGone`: its stdout is a pipe nobody reads (`| head -1` once head
/// has ended), with SIGPIPE ignored as in a process that started children;
/// `stdout` is then empty.
package func runBounded(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil,
    timeout: TimeInterval = 20, readerGone: Bool = false
) throws -> ProcessResult {
    if readerGone {
        // A signal ignored stays ignored across exec (Foundation resets the dispositions it starts a child with).
        return try runWithStdoutReaderGone(
            "/bin/bash", ["-c", "trap '' PIPE; exec \"$0\" \"$@\"", executable] + arguments,
            environment: environment, stdin: stdin, timeout: timeout)
    }
    let process = try RunningProcess(executable, arguments, environment: environment)
    if let stdin { process.write(bytes: stdin) }
    process.closeStdin()
    let name = (executable as NSString).lastPathComponent
    guard process.waitForOutputToClose(timeout: timeout) else {
        process.signal(SIGKILL)
        // A process it left behind may hold its output open: wait for that a
        // little, never for ever (the test fails instead of hanging).
        let leftBehind = !process.waitForOutputToClose(timeout: 5)
        throw HungProcess(
            description: "\(name) \(arguments) did not finish within \(timeout) s (killed)"
                + (leftBehind ? "; a process it started still holds its output open" : "") + "; stderr: \(process.stderr)")
    }
    // Foundation learns of the exit through a descriptor the child inherits:
    // a process the child left running with it would hide the exit for ever.
    guard let status = try? process.waitForExit(timeout: timeout) else {
        throw HungProcess(
            description: "\(name) \(arguments) closed its output but its exit was not seen within \(timeout) s: "
                + "a process it started still holds a descriptor it inherited")
    }
    return ProcessResult(status: status, stdout: process.standardOutput, stderr: process.stderr)
}

/// Foundation's `Process` here, not `RunningProcess`: the read end of the
/// child's stdout must be closed before it starts, and `RunningProcess`
/// always reads its children's output.
private func runWithStdoutReaderGone(
    _ executable: String, _ arguments: [String], environment: [String: String], stdin: Data?,
    timeout: TimeInterval
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    // Closed before the child starts, so no copy of the read end exists anywhere: its writes fail with EPIPE.
    try out.fileHandleForReading.close()
    try process.run()
    if let stdin { input.fileHandleForWriting.write(stdin) }
    try input.fileHandleForWriting.close()
    let said = UnsafeSendableBox(Data())
    let finished = DispatchGroup()
    finished.enter()
    DispatchQueue.global().async {
        let data = PipeReading.toEnd(err.fileHandleForReading)
        said.update { $0 = data }
        finished.leave()
    }
    if finished.wait(timeout: .now() + timeout) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        // A process it left behind may hold its output open: wait for that a
        // little, never for ever (the test fails instead of hanging).
        let leftBehind = finished.wait(timeout: .now() + 5) == .timedOut
        throw HungProcess(
            description: "\((executable as NSString).lastPathComponent) \(arguments) did not finish within \(timeout) s (killed)"
                + (leftBehind ? "; a process it started still holds its output open" : "")
                + "; stderr: \(String(decoding: said.value, as: UTF8.self))")
    }
    // Foundation learns of the exit through a descriptor the child inherits:
    // a process the child left running with it would hide the exit for ever.
    let exited = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        process.waitUntilExit()
        exited.signal()
    }
    if exited.wait(timeout: .now() + timeout) == .timedOut {
        throw HungProcess(
            description:
                "\((executable as NSString).lastPathComponent) \(arguments) closed its output but its exit was not seen within \(timeout) s: "
                + "a process it started still holds a descriptor it inherited")
    }
    return ProcessResult(status: process.terminationStatus, stdout: "", stderr: String(decoding: said.value, as: UTF8.self))
}

/// `groupsim` with a simulation root, bounded in time (see `runBounded`).
package func groupsimBounded(
    _ arguments: [String], root: TemporaryRoot, environment: [String: String] = [:], timeout: TimeInterval = 20,
    readerGone: Bool = false
) throws -> ProcessResult {
    try runBounded(
        BuiltExecutable.path("groupsim"), arguments,
        environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"].merging(environment) { _, new in new }, timeout: timeout,
        readerGone: readerGone)
}
