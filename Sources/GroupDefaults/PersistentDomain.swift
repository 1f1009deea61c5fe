import Foundation
import Guarded
import PropertyList
import SharedFiles
import SimulationValues

/// One persistent domain (a plist file) as this process sees it. Every
/// `GroupDefaults` instance of the process that uses the domain shares this
/// one object, as apps share cfprefsd's cache.
///
/// The view is three layers: `committed` (what was last read from or written
/// to disk), `inFlight` (edits being committed now) and `pending` (edits made
/// since). `set` changes `pending` and returns; the commit queue then merges
/// the edits into the file under its lock. Commits and reloads both run on
/// the commit queue, so `committed` only ever moves forward in time.
/// Unchecked Sendable: the cache, the overlays, the flags and the listeners are read and changed under `state`; the file work runs on the serial commit queue.
package final class PersistentDomain: @unchecked Sendable {
    package let name: String
    package let file: SharedPlistFile
    /// What the device's platform does when the domain grows (checked after this process's commits).
    private let sizeGuard: DomainSizeGuard?
    /// The device reads through cfprefsd's cache (macOS): a change of the
    /// file that no store commit made is neither reloaded nor kept by the
    /// next commit, which writes this process's view over it.
    private let readsThroughCache: Bool

    /// Guards the fields below it. Lock order: a file lock (the commit's), then this; never a file lock inside it.
    private let state = Locked()
    private var committed: [String: PlistValue]
    private var inFlight = Overlay()
    private var pending = Overlay()
    private var commitScheduled = false
    private var reloadScheduled = false
    /// A reload was asked for because the file was written in place: it must read.
    private var reloadMustRead = false
    /// The file this process's last commit put in place, held open (`InstalledFile`).
    private var installed: InstalledFile?
    private var listeners = ListenerList()
    /// Told (on the notification queue) each time a commit of this process takes the domain to its platform's
    /// warning size from below it, or finds it there first in this process (tvOS's `sizeLimitExceededNotification`).
    private var sizeWarningListeners: [Int: @Sendable () -> Void] = [:]
    private var nextSizeWarningListener = 0
    /// The last commit of this process left the file at or over the warning size.
    private var overSizeWarning = false
    /// Moves whenever this process's view of the domain changes (see `SearchListSnapshot`).
    let version = ContentVersion()
    /// Counters for benchmarks and diagnostics.
    package struct Statistics: Sendable {
        package var commits = 0
        package var commitTimings = CommitTimings()
        package var reloads = 0
        /// Time spent reading and decoding the file in reloads, in nanoseconds.
        package var reloadReadTime: UInt64 = 0
        /// Reloads not needed: the file was still this process's last commit.
        package var reloadsOfOwnCommit = 0
    }
    private var counters = Statistics()
    package var statistics: Statistics { state.withLock { counters } }

    private let commitQueue: DispatchQueue
    /// The last read failure reported, so a file that stays corrupt is reported once.
    private var reportedReadError: String?

    /// Listeners run here, one change at a time, in the order the changes happened.
    static let notificationQueue = DispatchQueue(label: "groupsim.defaults.notifications")

    /// Returns once every change announced so far has reached its listeners
    /// (a process about to exit calls it, so no change is lost).
    package static func deliverPendingNotifications() {
        notificationQueue.sync {}
    }

    /// Runs `work` on the notification queue after every change announced so
    /// far has reached its listeners, and before any announced later.
    package static func afterPendingNotifications(_ work: @escaping @Sendable () -> Void) {
        notificationQueue.async(execute: work)
    }

    /// Opened while the device was locked before its first unlock (`ProtectedData`):
    /// the file could not be read, so the view started empty and stays this
    /// process's own (reloads skipped) until it is relaunched; a commit writes
    /// the keys this process changed, from that view, over the user's file.
    package let openedLocked: Bool

    /// `device`: the settings of the device whose app preferences this domain is (nil: not an app's
    /// preferences, as an iCloud store's copy or a tool's view: no platform's size limits, no cfprefsd cache).
    init(name: String, file: SharedPlistFile, openedLocked: Bool = false, device: DeviceSettings? = nil) {
        self.name = name
        self.file = file
        self.openedLocked = openedLocked
        sizeGuard = device.map { DomainSizeGuard(platform: $0.platform) }
        readsThroughCache = device?.preferencesCache ?? false
        commitQueue = DispatchQueue(label: "groupsim.defaults.commit.\(name)")
        commitQueue.setSpecific(key: Self.onCommitQueue, value: queueToken)
        if openedLocked {
            committed = [:]
            return
        }
        do {
            committed = try file.read()
        } catch {
            // Apps keep running on a corrupt file, as on iOS: the domain reads
            // as empty, and the next commit moves the file aside.
            Diagnostics.report(Diagnostic(kind: .reloadFailed, message: "\(error)", path: file.path))
            reportedReadError = "\(error)"
            committed = [:]
        }
    }

    /// A queued commit holds the domain, so a domain released with changes
    /// is saved by its own commit before it goes, and the registry finds it
    /// open until then (a weak reference reads nil before `deinit` has run,
    /// so a hand-off from here could be missed by a reader or a reopening in
    /// that instant). Edits left when it goes anyway (commits deferred, or a
    /// commit that failed) are handed to `releasedCommits`, not committed
    /// here: the releasing thread may be anyone's (a UI thread, a
    /// notification handler) and must not wait on the disk or on another
    /// process's lock. Queued reloads hold it weakly.
    deinit {
        let leftover = state.withLock { pending }
        if !leftover.isEmpty {
            let file = file
            let name = name
            Self.releasedCommits.async {
                do {
                    let update = try file.update { $0 = leftover.applied(to: $0) }
                    if let report = Diagnostic.movedAside(update, path: file.path, domain: name) { Diagnostics.report(report) }
                } catch {
                    Diagnostics.report(
                        Diagnostic(
                            kind: .commitFailed,
                            message: "could not save domain \(name) to '\(file.path)' after its last user released it: "
                                + "\(errorClause(error)). The change is lost.",
                            path: file.path))
                }
            }
        }
        ChangeWatcher.shared.unwatch(directory: file.directory, fileName: file.fileName, id: ObjectIdentifier(self))
    }

    /// Commits of domains released with changes pending, in release order.
    /// Opening a domain and exiting both wait for it, so a released change
    /// never lands after a later one of the same process.
    static let releasedCommits = DispatchQueue(label: "groupsim.defaults.released-commits")

    /// Returns once every change of a released domain is on disk (or reported lost).
    package static func waitForReleasedCommits() { releasedCommits.sync {} }

    // MARK: Reading

    package func value(forKey key: String) -> PlistValue? {
        state.withLock { currentValue(forKey: key) }
    }

    /// The domain's whole dictionary as this process sees it.
    package func snapshot() -> [String: PlistValue] {
        state.withLock { currentView() }
    }

    private func currentValue(forKey key: String) -> PlistValue? {
        if let decided = pending.decision(forKey: key) { return decided }
        if let decided = inFlight.decision(forKey: key) { return decided }
        return committed[key]
    }

    private func currentView() -> [String: PlistValue] {
        pending.applied(to: inFlight.applied(to: committed))
    }

    // MARK: Writing

    /// Sets (or, with nil, removes) a key. The change is visible in this
    /// process at once and committed to disk right after. Returns the
    /// domain's version this set made (nil if the value was refused).
    @discardableResult
    package func set(_ value: PlistValue?, forKey key: String) -> UInt64? {
        if let value, !acceptable(value, what: "the value for key \"\(key)\"", limit: PlistLimits.maximumValueDepth) { return nil }
        let (madeVersion, inline, schedule) = state.withLock { () -> (UInt64, InlineDelivery, Bool) in
            // The old value is looked up only for someone to tell.
            let old = listeners.isEmpty ? nil : currentValue(forKey: key)
            pending.edits.updateValue(value, forKey: key)
            let madeVersion = version.bump()
            let inline =
                listeners.isEmpty || old == value
                ? InlineDelivery() : announce([KeyChange(key: key, old: old, new: value)], origin: .thisProcess)
            return (madeVersion, inline, scheduleCommitLocked())
        }
        if schedule { scheduleCommit() }
        inline.run()
        return madeVersion
    }

    /// Replaces the whole domain (nil or empty removes every key).
    package func replaceAll(with contents: [String: PlistValue]?) {
        if let contents, !acceptable(.dictionary(contents), what: "the new contents of domain \(name)", limit: PlistLimits.maximumDepth) { return }
        let (inline, schedule) = state.withLock { () -> (InlineDelivery, Bool) in
            let old = currentView()
            pending = Overlay(replace: true, edits: (contents ?? [:]).mapValues { Optional($0) })
            version.bump()
            return (announce(differences(from: old, to: currentView()), origin: .thisProcess), scheduleCommitLocked())
        }
        if schedule { scheduleCommit() }
        inline.run()
    }

    /// Whether every reader could read `value` back; if not, it is reported
    /// (as UserDefaults refuses a non-property-list value) and not stored.
    private func acceptable(_ value: PlistValue, what: @autoclosure () -> String, limit: Int) -> Bool {
        // Only a container can nest too deep; the description is made only for a report.
        switch value {
        case .array, .dictionary: break
        default: return true
        }
        do {
            try value.checkNesting(what: what(), limit: limit)
            return true
        } catch {
            Diagnostics.report(Diagnostic(kind: .valueRefused, message: "\(error); domain \(name) is unchanged", path: file.path))
            return false
        }
    }

    /// Marks each domain's commit queue, to refuse waiting on it from itself.
    private static let onCommitQueue = DispatchSpecificKey<UUID>()
    private let queueToken = UUID()

    /// A transaction body that synchronizes or starts another transaction of
    /// the same domain would wait for itself forever; of another domain, it
    /// would hold two file locks, which deadlocks against a process doing the
    /// same in the other order. Refuse both.
    private func refuseReentry() throws {
        guard let running = DispatchQueue.getSpecific(key: Self.onCommitQueue) else { return }
        if running == queueToken { throw DefaultsError.nestedTransaction(domain: name) }
        throw DefaultsError.transactionInsideAnotherDomain(domain: name)
    }

    /// Returns when everything set before the call is durable on disk.
    /// Gives up one lock wait (`LockWaitLimit`) after the call, not after
    /// its turn on the commit queue: behind a background commit that waits
    /// for a lock held by a stopped process, a wait of its own would double
    /// the time the caller is kept waiting.
    package func synchronize() throws {
        try refuseReentry()
        let deadline = try LockWaitLimit.deadline(from: MonotonicClock.now())
        // Without a transaction nothing is announced as this process's change.
        _ = try commitQueue.sync { try commitPending(transaction: nil, deadline: deadline) }
    }

    /// An atomic read-modify-write across processes: `body` sees the file's
    /// current contents (with this process's edits) under the lock, and its
    /// changes are committed before anyone else can write.
    /// Like `synchronize`, it gives up one lock wait after the call.
    package func transaction<T>(_ body: (inout [String: PlistValue]) throws -> T) throws -> T {
        try refuseReentry()
        let deadline = try LockWaitLimit.deadline(from: MonotonicClock.now())
        let (result, inline) = try commitQueue.sync { () throws -> (T, InlineDelivery) in
            var result: T? = nil
            let inline = try withoutActuallyEscaping(body) { body in
                try commitPending(transaction: { contents in result = try body(&contents) }, deadline: deadline)
            }
            return (result!, inline)
        }
        // Off the commit queue, so a listener may synchronize or start a transaction itself.
        inline.run()
        return result
    }

    /// Called when the file may have changed on disk; bursts become one reload.
    /// `mustRead`: the file was written in place (not renamed there), so it
    /// is read even if it looks like this process's last commit (`InstalledFile`).
    package func scheduleReload(mustRead: Bool = false) {
        let schedule = state.withLock { () -> Bool in
            if mustRead { reloadMustRead = true }
            if reloadScheduled { return false }
            reloadScheduled = true
            return true
        }
        if schedule { commitQueue.async { [weak self] in self?.reloadNow() } }
    }

    /// Reads the file now, on the commit queue, instead of when inotify tells:
    /// for a caller that must answer for what other processes wrote before it asked.
    package func reloadFromDisk() {
        commitQueue.sync { reloadNow() }
    }

    /// Reads the file and announces what differs as changes from other processes.
    /// Skipped when a commit is already queued behind it: that commit reads
    /// the file under its lock and announces the same changes, so the reload
    /// (often of this process's own last write) would only delay it.
    package func reloadNow() {
        let (commitQueued, mustRead, ownFile) = state.withLock { () -> (Bool, Bool, InstalledFile?) in
            reloadScheduled = false
            defer { reloadMustRead = false }
            return (commitScheduled, reloadMustRead, installed)
        }
        // A view opened locked is kept until the process is relaunched, as iOS's cache is.
        if commitQueued || openedLocked { return }
        // Still the file this process's last commit wrote: its view is that file already.
        if !mustRead, let ownFile, ownFile.isStill(at: file.path) {
            state.withLock { counters.reloadsOfOwnCommit += 1 }
            return
        }
        do {
            let start = MonotonicClock.now()
            // Through the cache, a file the store did not write (a hand edit) is never read into the view.
            guard let contents = readsThroughCache ? try file.readUnlessForeign() : try file.read() else { return }
            let elapsed = MonotonicClock.now() - start
            state.withLock {
                counters.reloads += 1
                counters.reloadReadTime += elapsed
                // Someone else's file now (or this process's, read anyway): nothing left to prove.
                installed = nil
            }
            state.withLock { reportedReadError = nil }
            // What a reload finds is another process's: nothing is owed inline.
            _ = absorb(contents, localKeys: [])
        } catch {
            let message = "\(error)"
            let repeated = state.withLock { () -> Bool in
                defer { reportedReadError = message }
                return reportedReadError == message
            }
            if !repeated { Diagnostics.report(Diagnostic(kind: .reloadFailed, message: message, path: file.path)) }
        }
    }

    // MARK: Listeners

    /// `inline`: this process's changes only, on the changing thread (see `ListenerList`).
    @discardableResult
    package func addListener(inline: Bool = false, _ listener: @escaping @Sendable (DomainChange) -> Void) -> Int {
        state.withLock { listeners.add(inline: inline, listener) }
    }

    package func removeListener(_ id: Int) {
        state.withLock { listeners.remove(id) }
    }

    /// How many listeners are registered (an instance without observers adds none).
    package var listenerCount: Int { state.withLock { listeners.count } }

    /// Calls `listener` on the notification queue each time a commit of this process takes the domain to the
    /// platform's warning size. Nil where the platform has none (every platform but tvOS), so nothing is kept.
    package func addSizeWarningListener(_ listener: @escaping @Sendable () -> Void) -> Int? {
        guard sizeGuard?.warns == true else { return nil }
        return state.withLock {
            nextSizeWarningListener += 1
            sizeWarningListeners[nextSizeWarningListener] = listener
            return nextSizeWarningListener
        }
    }

    package func removeSizeWarningListener(_ id: Int) {
        _ = state.withLock { sizeWarningListeners.removeValue(forKey: id) }
    }

    /// After a commit: tells the size-warning listeners when the domain has just reached the warning size.
    private func noteSize(over: Bool) {
        let told = state.withLock { () -> [@Sendable () -> Void] in
            defer { overSizeWarning = over }
            return over && !overSizeWarning ? Array(sizeWarningListeners.values) : []
        }
        guard !told.isEmpty else { return }
        Self.notificationQueue.async { for listener in told { listener() } }
    }

    // MARK: Internals (state lock held where the name says Locked)

    /// `GROUPSIM_DEFER_COMMITS=1`: no background commits; edits reach the
    /// file only on synchronize, a transaction, or exit (as an app that never
    /// synchronizes, or Foundation on Linux). For reproducing lost writes, and
    /// for tests that must hold changes pending.
    static let commitsDeferred = SimulationEnvironment.current[SimulationEnvironment.Name.deferCommits] == "1"

    private func scheduleCommitLocked() -> Bool {
        if commitScheduled || Self.commitsDeferred { return false }
        commitScheduled = true
        return true
    }

    /// Queued under the state lock, so listeners see changes in the order
    /// they happened. The caller runs the returned inline calls after unlocking.
    private func announce(_ changes: [KeyChange], origin: ChangeOrigin) -> InlineDelivery {
        guard !changes.isEmpty else { return InlineDelivery() }
        return listeners.deliver(DomainChange(domain: name, changes: changes, origin: origin))
    }

    /// Queues a commit that keeps the domain alive until it has run (see `deinit`).
    private func scheduleCommit() {
        commitQueue.async { self.commitInBackground() }
    }

    private func commitInBackground() {
        do {
            _ = try commitPending(transaction: nil, deadline: nil)
        } catch {
            // A reload skipped for this commit must still happen.
            scheduleReload()
            Diagnostics.report(
                Diagnostic(
                    kind: .commitFailed,
                    message:
                        "could not save domain \(name) to '\(file.path)': \(errorClause(error)). The change stays in memory and is retried on the next write or synchronize().",
                    path: file.path))
        }
    }

    /// Runs on the commit queue. Returns what a transaction's own changes owe
    /// inline listeners (nothing without a transaction). `deadline`: when to
    /// give up waiting for the file's lock (nil: one `LockWaitLimit` from now).
    private func commitPending(transaction: ((inout [String: PlistValue]) throws -> Void)?, deadline: UInt64?) throws -> InlineDelivery {
        let taken = state.withLock { () -> (edits: Overlay, lockedView: [String: PlistValue]?) in
            commitScheduled = false
            let edits = pending
            inFlight = edits
            pending = Overlay()
            // Locked: what the process saw is its own view, not the unreadable file.
            return (edits, openedLocked ? committed : nil)
        }
        let edits = taken.edits
        var lockedView = taken.lockedView
        if edits.isEmpty && transaction == nil { return InlineDelivery() }

        var transactionKeys = Set<String>()
        do {
            // cfprefsd refuses a write that reaches the platform's limit (tvOS, watchOS): the file keeps what it held.
            // Lock order: the file's lock (taken by `update`), then `state` inside it for a moment; `state` is never
            // held while a file lock is waited for, so a thread in `set` never waits behind the disk or another process.
            let update = try file.update(deadline: deadline, refusingSize: sizeGuard?.limits.termination) { contents in
                // cfprefsd writes the domain it holds: an edit made beside it is lost.
                if readsThroughCache, (try? file.lastWriter()) == .foreign { contents = state.withLock { committed } }
                var view = edits.applied(to: lockedView ?? contents)
                if let transaction {
                    let before = view
                    try transaction(&view)
                    let changes = differences(from: before, to: view)
                    for change in changes {
                        try change.new?.checkNesting(what: "the value for key \"\(change.key)\"", limit: PlistLimits.maximumValueDepth)
                    }
                    transactionKeys = Set(changes.map(\.key))
                }
                if lockedView == nil {
                    contents = view
                    return
                }
                lockedView = view
                // The keys written replace the user's values; the others stay in the file, unseen.
                if edits.replace { contents = view }
                for key in Set(edits.edits.keys).union(transactionKeys) { contents[key] = view[key] }
            }
            if let report = Diagnostic.movedAside(update, path: file.path, domain: name) { Diagnostics.report(report) }
            if let size = update.writtenSize, let sizeGuard {
                let over = sizeGuard.check(size: size, domain: name, path: file.path)
                if sizeGuard.warns { noteSize(over: over) }
            }
            let inline = absorb(lockedView ?? update.after, localKeys: transactionKeys)
            state.withLock {
                // Only a view that is the file's may skip reloading it (not a locked one).
                if let made = update.installed, lockedView == nil { installed = made }
                counters.commits += 1
                counters.commitTimings = counters.commitTimings + update.timings
            }
            return inline
        } catch SharedFileError.sizeLimitReached(let path, let size, _) where sizeGuard != nil {
            sizeGuard!.refuse(size: size, domain: name, path: path)
        } catch {
            state.withLock {
                // Put the edits back under anything set since, to retry later.
                pending = inFlight.merged(with: pending)
                inFlight = Overlay()
            }
            throw error
        }
    }

    /// Makes `contents` (just read or written) the committed state and
    /// announces what that changed in the view; `localKeys` (a transaction's)
    /// are this process's changes, whose inline calls are returned.
    private func absorb(_ contents: [String: PlistValue], localKeys: Set<String>) -> InlineDelivery {
        state.withLock {
            let old = currentView()
            committed = contents
            inFlight = Overlay()
            let changes = differences(from: old, to: currentView())
            if !changes.isEmpty { version.bump() }
            _ = announce(changes.filter { !localKeys.contains($0.key) }, origin: .otherProcess)
            return announce(changes.filter { localKeys.contains($0.key) }, origin: .thisProcess)
        }
    }
}
