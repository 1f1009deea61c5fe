import Foundation
import GroupSimTesting
import Testing

/// A program that links SimulatedFoundation, started by an owner that names
/// itself in GROUPSIM_OWNER_PID (as every `RunningProcess`, so every test,
/// does), ends when that owner ends, however it ends: a test process that
/// crashes leaves none of its launched programs behind.
@Suite struct LaunchedProgramLifetimeTests {
    @Test func aLaunchedProgramEndsWithItsOwner() async throws {
        let root = try Simulation()
        defer { root.finish() }
        let program = (root.binaries as NSString).appendingPathComponent("settings-examples")
        // The owner is a shell: it starts the program (watching for changes, 60 s at most) and prints its pid.
        let owner = Process()
        owner.executableURL = URL(fileURLWithPath: "/bin/sh")
        owner.arguments = ["-c", "GROUPSIM_OWNER_PID=$$ \"$0\" editor-watch 1 & echo pid=$!; wait", program]
        owner.environment = ["GROUPSIM_ROOT": root.root, "GROUPSIM_BUNDLE_ID": "com.example.notes", "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        owner.standardOutput = output
        try owner.run()
        // The pid, then the program's own "ready=true" once it is past its load (where it asks to end with its owner).
        var text = ""
        while !text.contains("ready=true\n") {
            let chunk = output.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "the owner's output ended: \(text)")
            text += String(decoding: chunk, as: UTF8.self)
        }
        let pidLine = try #require(text.split(separator: "\n").first { $0.hasPrefix("pid=") })
        let pid = try #require(Int32(pidLine.dropFirst(4)), "\(text)")
        #expect(isAlive(pid), "the program is running while its owner is")

        // Not waited for: Foundation learns of a child's end through a descriptor its children inherit, so
        // waiting would last as long as the program does.
        kill(owner.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while isAlive(pid) && Date() < deadline { usleep(10_000) }
        #expect(
            !isAlive(pid),
            "the program outlived its owner: \((try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?.prefix(400) ?? "") owner \(owner.processIdentifier)"
        )
        if isAlive(pid) { kill(pid, SIGKILL) }
    }

    /// Running, not gone nor a zombie waiting to be reaped.
    private func isAlive(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        return !status.split(separator: "\n").contains { $0.hasPrefix("State:") && $0.contains("Z") }
    }
}
