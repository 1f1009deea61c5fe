import CInotifyTools
import Foundation
import Guarded
import SharedFiles
import SimulationValues

/// The process's one inotify watcher: it tells every open domain when its
/// file may have changed on disk, so the domain reloads and announces what
/// other processes changed.
///
/// libinotifytools keeps process-wide state, is not thread-safe and exposes
/// no descriptor, so every call into it happens on this type's own thread.
/// Other threads never touch it: they queue a `Command` under `commandLock`
/// and wake the thread by writing one byte to an unlinked temporary file
/// that the thread watches for IN_MODIFY. The wake-up is an inotify event
/// like any other, so it cannot be lost between the thread draining the
/// queue and blocking in `inotifytools_next_event`: the kernel keeps it
/// queued until then. (If the kernel's queue overflows and drops it, the
/// overflow event wakes the thread instead, and it checks its commands after
/// every event.) That is why stopping and (un)watching are prompt and
/// race-free without timeouts.
///
/// Directories are watched, never files: a file replaced by `rename` takes
/// its watch with it. A directory that is deleted (a device erased) is
/// re-watched through its nearest existing ancestor when it reappears.
/// Unchecked Sendable: the command queue and the flags other threads read are under `commandLock`; the inotify state is touched by the watcher thread only.
package final class ChangeWatcher: @unchecked Sendable {
    package static let shared = ChangeWatcher()

    /// Events that can mean a watched plist changed, or a watched folder appeared or went.
    static let directoryMask = Int32(
        IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)

    private enum Command {
        case watch(PersistentDomain)
        case unwatch(directory: String, fileName: String, id: ObjectIdentifier)
        /// Runs once every earlier command is done (tests wait on it).
        case barrier(DispatchSemaphore)
        /// Blocks the watcher thread until `resume` is signalled (tests force an overflow with it).
        case pause(entered: DispatchSemaphore, resume: DispatchSemaphore)
        case stop
    }

    // Shared with other threads, under commandLock.
    private let commandLock = Locked()
    private var commands: [Command] = []
    private var running = false
    private var wakeDescriptor: Int32 = -1
    private var stoppedSignal: DispatchSemaphore?
    private var counters = Statistics()
    private var watchedPaths: Set<String> = []
    /// Each watched file's folder, once per domain reading it.
    private var watchedFileFolders: [String] = []
    /// Domains still open when the thread last ended (a `stop`, or inotify
    /// failing to start): the next start watches them again.
    private var dormantDomains: [WeakDomain] = []

    // Owned by the watcher thread alone.
    private var wakeWatch: Int32 = -1
    /// Set when inotify could not be restarted: the thread ends.
    private var failed = false
    private var directoryByWatch: [Int32: String] = [:]
    private var watchByDirectory: [String: Int32] = [:]
    /// The inode each watched folder had when watched, to notice it was replaced.
    private var inodeByWatch: [Int32: ino_t] = [:]
    /// directory → plist file name → the domains (one per file in practice) reading it.
    private var interests: [String: [String: [ObjectIdentifier: WeakDomain]]] = [:]
    /// Directories wanted but missing; an existing ancestor is watched meanwhile.
    private var missingDirectories: Set<String> = []

    init() {}

    package var statistics: Statistics { commandLock.withLock { counters } }

    /// How many folders at or below `path` are watched now (after `waitUntilIdle`, exact).
    package func watchedDirectories(under path: String) -> Int {
        commandLock.withLock { watchedPaths.filter { $0 == path || $0.hasPrefix(path + "/") }.count }
    }

    /// How many (file, domain) pairs at or below `path` the thread reports
    /// changes for now: one per file, since a process opens each file once.
    package func watchedFiles(under path: String) -> Int {
        commandLock.withLock { watchedFileFolders.filter { $0 == path || $0.hasPrefix(path + "/") }.count }
    }

    // MARK: Called from any thread

    /// Starts telling `domain` about changes to its file.
    package func watch(_ domain: PersistentDomain) { send(.watch(domain)) }

    func unwatch(directory: String, fileName: String, id: ObjectIdentifier) {
        let isRunning = commandLock.withLock { running }
        if isRunning { send(.unwatch(directory: directory, fileName: fileName, id: id)) }
    }

    /// Returns once the watcher has handled every command sent before (false on timeout).
    @discardableResult
    package func waitUntilIdle(timeout: TimeInterval = 10) -> Bool {
        let done = DispatchSemaphore(value: 0)
        send(.barrier(done))
        return done.wait(timeout: .now() + timeout) == .success
    }

    /// Stops the thread (blocked in the kernel) until the returned function is
    /// called; events queue up meanwhile. For tests that overflow the queue.
    package func pause() -> () -> Void {
        let entered = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        send(.pause(entered: entered, resume: resume))
        entered.wait()
        return { resume.signal() }
    }

    /// Stops the thread and drops every watch; the next `watch` starts it again.
    package func stop(timeout: TimeInterval = 10) {
        let signal = commandLock.withLock { () -> DispatchSemaphore? in
            guard running else { return nil }
            stoppedSignal = DispatchSemaphore(value: 0)
            return stoppedSignal
        }
        guard let signal else { return }
        send(.stop)
        _ = signal.wait(timeout: .now() + timeout)
    }

    private func send(_ command: Command) {
        let starts = commandLock.withLock { () -> Bool in
            commands.append(command)
            if !running {
                running = true
                return true
            }
            // Written under the lock: a restart closes the descriptor under it too,
            // so a number reused by another file is never written to.
            if wakeDescriptor >= 0 { _ = pwrite(wakeDescriptor, "w", 1, 0) }
            return false
        }
        if starts { Thread { [self] in runLoop() }.start() }
    }

    // MARK: The watcher thread

    private func runLoop() {
        // Named for /proc/<pid>/task/*/comm (15 characters at most). Set on
        // the thread itself, at once: Foundation's `Thread.name` may apply later.
        _ = CInotifyTools_nameCurrentThread("groupsim-watch")
        if let problem = startInotify() {
            Diagnostics.report(Diagnostic(kind: .reloadFailed, message: "\(problem); changes from other processes will not be seen"))
            inotifytools_cleanup()
            endThread(keeping: [], failed: true)
            return
        }
        // Domains that were open when the thread last ended are watched again.
        let dormant = commandLock.withLock { () -> [PersistentDomain] in
            defer { dormantDomains = [] }
            return dormantDomains.compactMap(\.domain)
        }
        for domain in dormant { addInterest(domain) }
        var keepRunning = handleCommands()
        while keepRunning {
            // Both 0 and negative timeouts block in this libinotifytools; the wake channel ends the wait.
            guard let event = inotifytools_next_event(-1) else {
                let code = inotifytools_error()
                if code == EINTR || code == 0 { continue }
                Diagnostics.report(Diagnostic(kind: .reloadFailed, message: "inotify read failed: \(String(cString: strerror(code)))"))
                continue
            }
            commandLock.withLock { counters.events += 1 }
            if event.pointee.wd == wakeWatch {
                keepRunning = handleCommands()
                continue
            }
            if event.pointee.mask & UInt32(IN_Q_OVERFLOW) != 0 { handleOverflow() } else { handle(event) }
            if failed { break }
            // An overflow may have dropped the wake event, and a restart replaces
            // the wake channel: commands queued meanwhile are handled here.
            if commandLock.withLock({ !commands.isEmpty }) { keepRunning = handleCommands() }
        }
        shutDown()
    }

    /// Initializes libinotifytools and the wake channel; nil, or what failed.
    private func startInotify() -> String? {
        // libinotifytools waits with select(), which aborts the process for a
        // descriptor at or above FD_SETSIZE. The inotify descriptor will be the
        // lowest free one: if that is too high, do without change propagation
        // rather than crash.
        let probe = open("/dev/null", O_RDONLY | O_CLOEXEC)
        if probe >= 0 { close(probe) }
        if probe >= Int32(FD_SETSIZE) {
            return
                "cannot start inotify: this process has \(probe) descriptors open, and libinotifytools can only wait on one below \(FD_SETSIZE) (close descriptors the process no longer needs)"
        }
        guard inotifytools_initialize() != 0 else {
            return "cannot start inotify: \(String(cString: strerror(inotifytools_error()))) (see /proc/sys/fs/inotify/max_user_instances)"
        }
        return makeWakeChannel()
    }

    /// An unlinked temporary file: writing it wakes this thread, and nothing is left on disk.
    /// Returns nil, or what failed.
    private func makeWakeChannel() -> String? {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-wake-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            return
                "cannot create the watcher's wake file in '\(NSTemporaryDirectory())': \(String(cString: strerror(errno))) (set TMPDIR to a writable folder)"
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        defer { unlink(path) }
        guard inotifytools_watch_file(path, Int32(IN_MODIFY)) != 0 else {
            close(descriptor)
            return "cannot watch the wake file '\(path)': \(String(cString: strerror(inotifytools_error())))"
        }
        wakeWatch = inotifytools_wd_from_filename(path)
        commandLock.withLock { wakeDescriptor = descriptor }
        return nil
    }

    /// Drains the command queue; false once told to stop.
    private func handleCommands() -> Bool {
        while true {
            let next = commandLock.withLock { commands.isEmpty ? nil : commands.removeFirst() }
            guard let command = next else { return true }
            switch command {
            case .watch(let domain): addInterest(domain)
            case .unwatch(let directory, let fileName, let id): removeInterest(directory: directory, fileName: fileName, id: id)
            case .barrier(let done): done.signal()
            case .pause(let entered, let resume):
                entered.signal()
                resume.wait()
            case .stop: return false
            }
        }
    }

    private func addInterest(_ domain: PersistentDomain) {
        let directory = domain.file.directory
        interests[directory, default: [:]][domain.file.fileName, default: [:]][ObjectIdentifier(domain)] = WeakDomain(domain)
        ensureWatched(directory)
        updateWatchCount()
        // The domain read its file before this watch existed: re-read once so
        // a write that landed in between is not missed.
        scheduleReload(domain)
    }

    private func removeInterest(directory: String, fileName: String, id: ObjectIdentifier) {
        interests[directory]?[fileName]?.removeValue(forKey: id)
        if interests[directory]?[fileName]?.isEmpty == true { interests[directory]?.removeValue(forKey: fileName) }
        if interests[directory]?.isEmpty == true { interests.removeValue(forKey: directory) }
        missingDirectories = missingDirectories.filter { interests[$0] != nil }
        pruneWatches()
    }

    /// Watches `directory`, or, if it does not exist, its nearest existing
    /// ancestor (whose IN_CREATE then leads back down to it).
    private func ensureWatched(_ directory: String) {
        if watchByDirectory[directory] != nil { return }
        guard addWatch(directory) == .missing else { return }
        let parent = (directory as NSString).deletingLastPathComponent
        guard parent != directory, !parent.isEmpty else { return }
        ensureWatched(parent)
        // It may have been created while the parent's watch was being set up,
        // in which case no event for it will ever come: try once more.
        guard addWatch(directory) == .missing else { return }
        if interests[directory] != nil { missingDirectories.insert(directory) }
    }

    private enum WatchResult { case watched, missing, failed }

    /// `GROUPSIM_WATCH_DEBUG=1` traces watches and events to stderr.
    private let tracing = SimulationEnvironment.current[SimulationEnvironment.Name.watchDebug] != nil
    private func trace(_ message: @autoclosure () -> String) {
        if tracing { FileHandle.standardError.write(Data("groupsim watcher: \(message())\n".utf8)) }
    }

    private func addWatch(_ directory: String) -> WatchResult {
        let ok = inotifytools_watch_file(directory, Self.directoryMask) != 0
        let code = ok ? 0 : inotifytools_error()
        trace("watch \(directory): \(ok ? "ok" : String(cString: strerror(code)))")
        guard ok else {
            // A missing folder is normal (it is watched for through its parent);
            // anything else means changes there will not be seen: say so.
            if code == ENOENT || code == ENOTDIR { return .missing }
            let hint = code == ENOSPC ? " (the inotify watch limit is reached: raise /proc/sys/fs/inotify/max_user_watches)" : ""
            Diagnostics.report(
                Diagnostic(
                    kind: .reloadFailed,
                    message:
                        "cannot watch '\(directory)': \(String(cString: strerror(code)))\(hint); changes made there by other processes will not be seen",
                    path: directory))
            return .failed
        }
        let withSlash = inotifytools_wd_from_filename(directory + "/")
        let descriptor = withSlash > 0 ? withSlash : inotifytools_wd_from_filename(directory)
        directoryByWatch[descriptor] = directory
        watchByDirectory[directory] = descriptor
        var info = stat()
        if stat(directory, &info) == 0 { inodeByWatch[descriptor] = info.st_ino }
        missingDirectories.remove(directory)
        updateWatchCount()
        return .watched
    }

    /// Drops watches that serve no domain and no missing directory below them.
    private func pruneWatches() {
        for (directory, descriptor) in watchByDirectory {
            if interests[directory] != nil { continue }
            if missingDirectories.contains(where: { $0.hasPrefix(directory + "/") }) { continue }
            // A folder already gone lost its watch in the kernel (removing it
            // again only prints libinotifytools' "Failed to remove watch");
            // its IN_IGNORED, still queued, restarts inotify.
            if !stillPresent(descriptor, directory) { continue }
            _ = inotifytools_remove_watch_by_wd(descriptor)
            forget(descriptor)
        }
        updateWatchCount()
    }

    private func forget(_ descriptor: Int32) {
        inodeByWatch.removeValue(forKey: descriptor)
        if let directory = directoryByWatch.removeValue(forKey: descriptor) { watchByDirectory.removeValue(forKey: directory) }
    }

    private func updateWatchCount() {
        let paths = Set(watchByDirectory.keys)
        let folders = interests.flatMap { directory, files in files.values.flatMap { domains in domains.map { _ in directory } } }
        commandLock.withLock {
            counters.watchedDirectories = paths.count
            watchedPaths = paths
            watchedFileFolders = folders
        }
    }

    private func handle(_ event: UnsafeMutablePointer<inotify_event>) {
        let mask = event.pointee.mask
        trace("event wd=\(event.pointee.wd) mask=0x\(String(mask, radix: 16)) in \(directoryByWatch[event.pointee.wd] ?? "?")")
        guard let directory = directoryByWatch[event.pointee.wd] else { return }
        let name: String? =
            event.pointee.len > 0
            ? String(cString: UnsafeRawPointer(event).advanced(by: MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self))
            : nil

        // A folder whose files are still open somewhere is not reported
        // deleted until they close; a deleted file is the cue to check.
        let watchedFile = name.map { interests[directory]?[$0] != nil } ?? false
        let folderGone =
            mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0
            || (watchedFile && mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 && !stillPresent(event.pointee.wd, directory))
        if folderGone {
            if !restartInotify() { failed = true }
            return
        }
        guard let name else { return }
        if mask & UInt32(IN_ISDIR) != 0 {
            // A folder appeared: maybe one we wait for, or one on the way to it.
            let appeared = directory + "/" + name
            for missing in missingDirectories where missing == appeared || missing.hasPrefix(appeared + "/") {
                ensureWatched(missing)
                // Reload even if still missing: the file may exist in a folder
                // that was watched only now.
                reloadAll(in: missing)
            }
            pruneWatches()
            return
        }
        // A file that left the name matters only if none took its place: one
        // that did sent an event of its own, before or after this one (an
        // exchange sends the new file's IN_MOVED_TO first), whose reload reads
        // it. Reading here too would read the same file twice per commit.
        let arrived = mask & UInt32(IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE) != 0
        if watchedFile, !arrived, mask & UInt32(IN_MOVED_FROM | IN_DELETE) != 0, nameExists(name, in: directory) { return }
        // Written in place rather than renamed there: it may look unchanged.
        let inPlace = mask & UInt32(IN_CLOSE_WRITE | IN_CREATE) != 0
        for entry in interests[directory]?[name]?.values ?? [:].values {
            if let domain = entry.domain { scheduleReload(domain, mustRead: inPlace) }
        }
    }

    /// A watched folder went away (a device erased). libinotifytools never
    /// forgets a dead watch's path, so re-watching the same path would be
    /// misattributed: start a fresh inotify instance instead, watch every
    /// folder again (or its nearest ancestor while it is missing) and reload
    /// every domain, so nothing that happened meanwhile is missed.
    /// Returns false if inotify could not be started again (the thread must end).
    private func restartInotify() -> Bool {
        inotifytools_cleanup()
        directoryByWatch.removeAll()
        watchByDirectory.removeAll()
        inodeByWatch.removeAll()
        missingDirectories.removeAll()
        commandLock.withLock {
            if wakeDescriptor >= 0 { close(wakeDescriptor) }
            wakeDescriptor = -1
        }
        if let problem = startInotify() {
            // Without inotify this thread cannot be woken: end it, keeping the
            // domains, so the next command starts a fresh thread that tries again.
            Diagnostics.report(
                Diagnostic(
                    kind: .reloadFailed,
                    message:
                        "\(problem) (restarting after a watched folder was deleted); changes from other processes will not be seen until a suite is opened or the watcher is used again"
                ))
            return false
        }
        commandLock.withLock { counters.restarts += 1 }
        for directory in interests.keys {
            ensureWatched(directory)
            reloadAll(in: directory)
        }
        updateWatchCount()
        return true
    }

    private func nameExists(_ name: String, in directory: String) -> Bool {
        var info = stat()
        return lstat(directory + "/" + name, &info) == 0
    }

    private func stillPresent(_ descriptor: Int32, _ directory: String) -> Bool {
        var info = stat()
        return stat(directory, &info) == 0 && inodeByWatch[descriptor] == info.st_ino
    }

    private func handleOverflow() {
        commandLock.withLock { counters.overflows += 1 }
        Diagnostics.report(Diagnostic(kind: .watcherOverflow, message: "the inotify event queue overflowed; every open domain is reloaded from disk"))
        for directory in interests.keys {
            ensureWatched(directory)
            reloadAll(in: directory)
        }
    }

    /// After events may have been lost (a restart, an overflow) or a folder appeared: every file is read.
    private func reloadAll(in directory: String) {
        for files in interests[directory]?.values ?? [:].values {
            for entry in files.values { if let domain = entry.domain { scheduleReload(domain, mustRead: true) } }
        }
    }

    private func scheduleReload(_ domain: PersistentDomain, mustRead: Bool = false) {
        commandLock.withLock { counters.reloadsScheduled += 1 }
        domain.scheduleReload(mustRead: mustRead)
    }

    private func shutDown() {
        // Domains still open are watched again by the next thread.
        let keep = interests.values.flatMap { $0.values.flatMap { $0.values } }.filter { $0.domain != nil }
        directoryByWatch.removeAll()
        watchByDirectory.removeAll()
        interests.removeAll()
        missingDirectories.removeAll()
        inotifytools_cleanup()
        endThread(keeping: keep, failed: failed)
    }

    /// Ends the thread, remembering the domains still open for the next
    /// start. After a stop, commands sent meanwhile start a fresh thread at
    /// once. After a failure to start inotify, nobody is left waiting forever:
    /// barriers and pauses are answered, watches are kept for the next start
    /// (any later command tries again), and no thread is started in a loop.
    private func endThread(keeping keep: [WeakDomain], failed: Bool) {
        self.failed = false
        commandLock.withLock {
            if wakeDescriptor >= 0 { close(wakeDescriptor) }
            wakeDescriptor = -1
            running = false
            counters.watchedDirectories = 0
            watchedPaths = []
            watchedFileFolders = []
            dormantDomains += keep
            if failed {
                for command in commands {
                    switch command {
                    case .watch(let domain): dormantDomains.append(WeakDomain(domain))
                    case .barrier(let done): done.signal()
                    case .pause(let entered, _): entered.signal()
                    case .unwatch, .stop: break
                    }
                }
                commands.removeAll()
            } else if !commands.isEmpty {
                running = true
                Thread { [self] in runLoop() }.start()
            }
            stoppedSignal?.signal()
            stoppedSignal = nil
        }
    }
}
