import Foundation
import TestSupport
import Testing

/// `groupsim run` finds main-app, widget and intent-extension beside its own
/// executable, wherever it is started from.
@Suite struct RoleExecutableTests {
    let folder = TemporaryRoot()

    func shell(_ script: String, path: String) throws -> ProcessResult {
        // No GROUPSIM_BIN_DIR: the runner must find the executables by itself.
        try runProcess("/usr/bin/env", ["-u", "GROUPSIM_BIN_DIR", "PATH=\(path)", "NO_COLOR=1", "TMPDIR=\(folder.path)", "/bin/sh", "-c", script])
    }

    func scenario() throws -> String {
        let path = folder.path + "/one.yaml"
        try "summary: x\nprocesses: { app: { role: main-app } }\nsteps: [ { launch: app }, { set: { in: app, key: k, value: 1 } } ]\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func runStartedThroughPATHFromAnotherFolderFindsTheRoleExecutables() throws {
        let path = try scenario()
        let elsewhere = folder.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let result = try shell("cd '\(elsewhere)' && groupsim run '\(path)'", path: BuiltExecutable.directory + ":/usr/bin:/bin")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("scenarios: 1 passed, 0 failed"))
    }

    @Test func aMissingRoleExecutableIsAClearErrorBeforeAnythingRuns() throws {
        let path = try scenario()
        let lonely = folder.path + "/lonely"
        try FileManager.default.createDirectory(atPath: lonely, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: BuiltExecutable.path("groupsim"), toPath: lonely + "/groupsim")
        let result = try shell("cd '\(folder.path)' && groupsim run '\(path)'", path: lonely + ":/usr/bin:/bin")
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("cannot find main-app beside groupsim in \(lonely)"), "\(result.stderr)")
        #expect(!result.stdout.contains("Running"))
    }
}
