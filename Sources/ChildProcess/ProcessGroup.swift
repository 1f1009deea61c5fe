import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A process group that a child leads (`CleanSpawn`'s `newGroup`): its id is
/// the child's pid, and whatever the child starts joins it, and whatever
/// those start, unless they leave it (`setsid`, `setpgid`), which nothing
/// keeps a program from doing (a cgroup would; the runner does not make one).
/// A signal to the group reaches every process in it at once, one forked
/// while it is sent included (the kernel makes a fork that races a group's
/// signal start again), where signals by pid would chase a child that forks.
///
/// The id is only ours while a process of the group, or its leader's zombie,
/// holds it: `RunningProcess` ends a group before it reaps the leader.
package struct ProcessGroup: Sendable, Equatable {
    package let id: pid_t

    package init(id: pid_t) { self.id = id }

    /// Sends `signal` to every process of the group; false if it has none.
    @discardableResult
    package func signal(_ signal: Int32) -> Bool { kill(-id, signal) == 0 }

    /// The processes of the group that have not ended (a zombie has), as /proc
    /// shows them: nothing but a process's parent hears of its end, so a
    /// group's members are looked for, not waited for.
    package func livingMembers() -> [pid_t] {
        guard let folder = opendir("/proc") else { return [] }
        defer { closedir(folder) }
        var found: [pid_t] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), let status = Self.status(of: pid), status.group == id, !status.ended else { continue }
            found.append(pid)
        }
        return found
    }

    /// Ends what is left of the group once its leader has ended (and is not yet
    /// reaped, so the id is still its own): SIGTERM (and SIGCONT, for a stopped
    /// one), up to `grace` seconds for them to end, then SIGKILL to whatever is
    /// still there. Nothing is sent when the group holds nothing but the
    /// leader's zombie, except the SIGKILL, which also ends a process forked as
    /// the group was being looked through. Returns once they have ended (a
    /// killed process takes a moment to: its end is reported after this), or
    /// `grace` after the SIGKILL for one the kernel holds up.
    package func endMembers(grace: TimeInterval) {
        // Every 10 ms: nothing tells this process when another's child ends.
        func waitForMembers(_ seconds: TimeInterval) {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, !livingMembers().isEmpty { usleep(10_000) }
        }
        if !livingMembers().isEmpty {
            signal(SIGTERM)
            signal(SIGCONT)
            waitForMembers(grace)
        }
        signal(SIGKILL)
        waitForMembers(grace)
    }

    /// A process's group, and whether it has ended (a zombie, or dead), from
    /// /proc/PID/stat; nil once it is gone.
    package static func status(of pid: pid_t) -> (group: pid_t, ended: Bool)? {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // "PID (NAME) STATE PPID PGRP …": the name (at most 16 bytes) may hold spaces and parentheses, nothing after it does.
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0, let nameEnd = buffer[..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(nameEnd + 1)..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 3, let state = fields.first?.first, let group = pid_t(String(decoding: fields[fields.startIndex + 2], as: UTF8.self))
        else { return nil }
        return (group, state == UInt8(ascii: "Z") || state == UInt8(ascii: "X"))
    }
}
