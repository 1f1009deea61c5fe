import Foundation

/// A run that did not end in time: the process was killed and the test fails
/// with this, instead of hanging the whole test run.
public struct HungProcess: Error, CustomStringConvertible {
    public let description: String
}

/// Runs an executable to completion like `runProcess`, but kills it and
/// throws `HungProcess` if it has not finished within `timeout` seconds.
public func runBounded(_ executable: String, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil,
                       timeout: TimeInterval = 20) throws -> ProcessResult {
    let process = try RunningProcess(executable, arguments, environment: environment)
    if let stdin { process.write(bytes: stdin) }
    process.closeStdin()
    let name = (executable as NSString).lastPathComponent
    guard process.waitForOutputToClose(timeout: timeout) else {
        process.signal(SIGKILL)
        // A process it left behind may hold its output open: wait for that a
        // little, never for ever (the test fails instead of hanging).
        let leftBehind = !process.waitForOutputToClose(timeout: 5)
        throw HungProcess(description: "\(name) \(arguments) did not finish within \(timeout) s (killed)"
            + (leftBehind ? "; a process it started still holds its output open" : "") + "; stderr: \(process.stderr)")
    }
    // Foundation learns of the exit through a descriptor the child inherits:
    // a process the child left running with it would hide the exit for ever.
    guard let status = try? process.waitForExit(timeout: timeout) else {
        throw HungProcess(description: "\(name) \(arguments) closed its output but its exit was not seen within \(timeout) s: "
            + "a process it started still holds a descriptor it inherited")
    }
    return ProcessResult(status: status, stdout: process.standardOutput, stderr: process.stderr)
}

/// `groupsim` with a simulation root, bounded in time (see `runBounded`).
public func groupsimBounded(_ arguments: [String], root: TemporaryRoot, environment: [String: String] = [:], timeout: TimeInterval = 20) throws -> ProcessResult {
    try runBounded(
        BuiltExecutable.path("groupsim"), arguments,
        environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"].merging(environment) { _, new in new }, timeout: timeout)
}
