import Foundation
import Guarded

#if canImport(Glibc)
    import Glibc
#endif

/// What a process leaves behind is ended and removed once it has ended,
/// however it ended: `kill -9`, which no handler of its own sees, included.
///
/// `OwnerLifetime` has the kernel kill a child when its starter ends, but
/// only that child: the children it started (a user's program's own) are not
/// tied to anyone, and a folder the starter made (a scenario's root) is not
/// removed by anyone. So the starter (the owner) starts a warden, a small
/// process of its own (`groupsim warden`, which calls `serve`), and tells it
/// on the warden's stdin what it has to end (`watch`: a process group, a
/// folder) and, once it has ended or removed that itself, that it need not
/// (`release`). The owner holds the only write end of that pipe, so the
/// warden reads end of file when the owner has ended and the kernel has
/// closed its descriptors, whichever way it ended: it then kills every group
/// still watched and removes every folder, says so on the owner's stderr
/// (which it keeps for that, so whoever reads it to its end has waited for
/// this too), and exits. An owner that ended everything itself leaves it
/// nothing to do, and it exits saying nothing.
///
/// The warden is in a session of its own, so a signal to the owner's process
/// group (a terminal's ^C, a `kill -9 -PGID`) does not reach it; it is not
/// tied to the owner (`OwnerLifetime`); it holds no descriptor of the owner's
/// but its stderr. What it cannot do: end a process that left its group
/// (`setsid`, `setpgid`), or anything at all if it is killed with its owner
/// (`kill -9` of both, the machine's power).
/// Unchecked Sendable: `input` is a `ChildInput` (whole writes, under its lock); `warned` is under `lock`.
package final class Warden: @unchecked Sendable {
    package let pid: pid_t
    private let input: ChildInput
    private let lock = Locked()
    private var warned = false

    /// Starts `executable arguments`, which must call `Warden.serve()`.
    package init(executable: String, arguments: [String]) throws {
        var ends: [Int32] = [0, 0]
        // Close-on-exec from the start: no other child, whichever thread starts it meanwhile, may hold the write end, or
        // the warden would wait for that child's end too. pipe2 is glibc's (not in Swift's view of unistd.h).
        typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
        guard let pipe2 = dlsym(nil, "pipe2"), unsafeBitCast(pipe2, to: Pipe2.self)(&ends, O_CLOEXEC) == 0 else {
            throw ChildProcessError.wardenPipeFailed(executable: executable, errno: errno)
        }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        var environment = ProcessInfo.processInfo.environment
        // Its owner's end is what it waits for: it must not end with it (OwnerLifetime).
        environment[OwnerLifetime.variable] = nil
        do {
            pid = try CleanSpawn.start(executable, arguments, environment: environment, newSession: true) { actions in
                posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            }
        } catch {
            close(readEnd)
            close(writeEnd)
            throw error
        }
        close(readEnd)
        input = ChildInput(FileHandle(fileDescriptor: writeEnd, closeOnDealloc: true))
    }

    /// The warden kills `group` if this process ends before it `release`s it.
    package func watch(_ group: ProcessGroup) { send("watch-group \(group.id)") }

    /// This process has ended `group` (its leader not yet reaped, so the id is still the group's).
    package func release(_ group: ProcessGroup) { send("release-group \(group.id)") }

    /// The warden removes `folder` if this process ends before it `release`s it.
    package func watch(folder: String) { send("watch-folder \(folder)") }

    /// This process has removed `folder` (or keeps it on purpose).
    package func release(folder: String) { send("release-folder \(folder)") }

    /// Records end with a NUL, which no path holds.
    private func send(_ record: String) {
        let outcome = input.write(Data((record + "\0").utf8), timeout: 5)
        guard outcome != .written, isFirstFailure() else { return }
        FileHandle.standardError.write(
            Data(
                ("warning: the warden (pid \(pid)) no longer takes what this process starts (\(outcome == .closed ? "it has ended" : "it is stuck")); "
                    + "should this process be killed, what it started may be left running, and its folders left behind\n").utf8))
    }

    /// True the first time only: a warden gone is said once.
    private func isFirstFailure() -> Bool {
        lock.withLock {
            defer { warned = true }
            return !warned
        }
    }
}

extension Warden {
    /// How long the warden tries to remove a folder that processes being killed may still be writing into.
    static let removalLimit: TimeInterval = 5

    /// The warden's side: reads what to watch and release from stdin until end
    /// of file, then ends what is still watched, says what it did on stderr, and exits.
    package static func serve() -> Never {
        // Its one message goes to the owner's stderr, whose reader may be gone by then.
        signal(SIGPIPE, SIG_IGN)
        let owner = getppid()
        var groups: [pid_t] = []
        var folders: [String] = []
        var pending = Data()
        while true {
            let chunk = PipeReading.nextChunk(FileHandle.standardInput)
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let end = pending.firstIndex(of: 0) {
                let record = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...end)
                let words = record.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                let subject = words.count > 1 ? String(words[1]) : ""
                switch String(words.first ?? "") {
                case "watch-group": if let id = pid_t(subject) { groups.append(id) }
                case "release-group": if let id = pid_t(subject) { groups.removeAll { $0 == id } }
                case "watch-folder": folders.append(subject)
                case "release-folder": folders.removeAll { $0 == subject }
                default: break
                }
            }
        }
        guard !groups.isEmpty || !folders.isEmpty else { exit(0) }
        if owner > 1 { waitUntilEnded(owner) }
        var done: [String] = []
        for group in groups.map(ProcessGroup.init) {
            let members = group.livingMembers()
            guard !members.isEmpty else { continue }
            group.signal(SIGKILL)
            done.append("killed process group \(group.id) (\(members.count) process\(members.count == 1 ? "" : "es"))")
        }
        for folder in folders { done.append(remove(folder)) }
        try? FileHandle.standardError.write(
            contentsOf: Data("groupsim warden: process \(owner) ended before it cleaned up: \(done.joined(separator: "; "))\n".utf8))
        exit(0)
    }

    /// Waits (at most `removalLimit`) until the owner is a zombie or gone: by
    /// then the kernel has sent its children their parent-death signal
    /// (`OwnerLifetime`), and none of them is left to write into a folder
    /// after it is removed, but for a last call already under way. Its
    /// descriptors, whose closing the warden saw, are closed a little before.
    private static func waitUntilEnded(_ owner: pid_t) {
        let deadline = Date().addingTimeInterval(removalLimit)
        // Every 10 ms: only the owner's parent hears of its end.
        while Date() < deadline, let status = ProcessGroup.status(of: owner), !status.ended { usleep(10_000) }
    }

    /// Removes `folder`, trying again while processes being killed still write
    /// into it; says what was done.
    private static func remove(_ folder: String) -> String {
        let deadline = Date().addingTimeInterval(removalLimit)
        while true {
            do {
                try FileManager.default.removeItem(atPath: folder)
                return "removed \(folder)"
            } catch {
                if !FileManager.default.fileExists(atPath: folder) { return "removed \(folder)" }
                guard Date() < deadline else { return "could not remove \(folder): \(error.localizedDescription)" }
                usleep(20_000)
            }
        }
    }
}
