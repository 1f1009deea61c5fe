import Foundation
import Guarded
import PropertyList
import SharedFiles

/// A domain held without keeping it alive.
final class WeakDomain {
    weak var domain: PersistentDomain?
    init(_ domain: PersistentDomain) { self.domain = domain }
}

/// The process's open persistent domains, one object per file, each watched
/// for changes by `ChangeWatcher`. Domains are held weakly: when the last
/// instance using a domain goes, so does it (and, with it, its watch).
/// Unchecked Sendable: the table of open domains is read and changed under `lock`.
package final class DomainRegistry: @unchecked Sendable {
    package static let shared = DomainRegistry()

    private let lock = Locked()
    private var domains: [String: WeakDomain] = [:]

    private init() {
        atexit {
            // A process that exits with a change it could not save must not
            // look successful: the status becomes 74 (EX_IOERR).
            if !DomainRegistry.shared.synchronizeAll(reason: "at exit", skippingUnchangedSinceLastSave: true) {
                fflush(nil)
                _exit(74)
            }
        }
    }

    /// The domain stored at `path`, opened if this process does not hold it yet.
    /// `root`: the folder the file must stay in, through real folders only (see `SharedPlistFile`).
    /// `maximumSize`: the largest file read and written (see `SharedPlistFile`).
    /// `contentCheck`, `readOnly`: see `SharedPlistFile`; they are the file's from its first opening in the process.
    /// `unreadable`: the device is locked before its first unlock (`ProtectedData`): a domain opened now reads as
    /// empty for the process's life; it is asked only when the domain is first opened.
    /// `device`: for an app's preferences on a device, that device's settings (its platform's size limits,
    /// cfprefsd's cache); nil for any other file. Asked only when the domain is first opened.
    package func domain(
        named name: String, at path: String, root: String, maximumSize: Int = PlistLimits.maximumFileSize,
        contentCheck: SharedPlistFile.ContentCheck? = nil, readOnly: Bool = false, unreadable: () throws -> Bool = { false },
        device: () throws -> DeviceSettings? = { nil }
    ) throws -> PersistentDomain {
        // A released domain's last changes land before the file is opened again.
        PersistentDomain.waitForReleasedCommits()
        let (domain, isNew) = try lock.withLock { () throws -> (PersistentDomain, Bool) in
            if let existing = domains[path]?.domain { return (existing, false) }
            // The root's setting, read at each first opening: a root's processes started after a change use the new one.
            let durable = try SimulationRoot(path: root).durability().waitsForTheDisk
            let settings = try device()
            let domain = PersistentDomain(
                name: name,
                file: try SharedPlistFile(
                    path: path, durable: durable, root: root, maximumSize: maximumSize, contentCheck: contentCheck, readOnly: readOnly,
                    keepsStoreCopy: settings?.preferencesCache ?? false),
                openedLocked: try unreadable(), device: settings)
            domains[path] = WeakDomain(domain)
            return (domain, true)
        }
        if isNew { ChangeWatcher.shared.watch(domain) }
        return domain
    }

    /// The domain stored at `path` if this process holds it open; opens nothing.
    package func openDomain(at path: String) -> PersistentDomain? {
        lock.withLock { domains[path]?.domain }
    }

    package var openDomains: [PersistentDomain] {
        lock.withLock {
            domains = domains.filter { $0.value.domain != nil }
            return domains.values.compactMap(\.domain)
        }
    }

    /// Reads every open domain's file now, instead of when inotify tells: a widget asked to reload reads what other
    /// processes wrote before they asked, as a widget reading through cfprefsd does (a reload request and the suite
    /// it shows are two files, whose events may come in either order).
    package func reloadOpenDomainsFromDisk() {
        for domain in openDomains { domain.reloadFromDisk() }
    }

    /// Commits every domain's pending edits (used at exit and on SIGINT/SIGTERM),
    /// reporting each failure through `Diagnostics`. False if any change is unsaved.
    /// `skippingUnchangedSinceLastSave`: leaves out the domains that
    /// `saveBeforeExit` tried and that have not changed since.
    @discardableResult
    package func synchronizeAll(reason: String = "before the process ends", skippingUnchangedSinceLastSave: Bool = false) -> Bool {
        var saved = true
        let settled = skippingUnchangedSinceLastSave ? lock.withLock { lastSave } : []
        for domain in openDomains {
            if settled.contains(where: { $0.domain === domain && $0.version == domain.version.current }) { continue }
            do { try domain.synchronize() } catch {
                saved = false
                Diagnostics.report(
                    Diagnostic(
                        kind: .commitFailed,
                        message: "could not save domain \(domain.name) to '\(domain.file.path)' \(reason): \(error); the change is lost",
                        path: domain.file.path))
            }
        }
        PersistentDomain.waitForReleasedCommits()
        return saved
    }

    /// The domains `saveBeforeExit` tried, with their versions then (held to the end: the process is ending).
    private var lastSave: [(domain: PersistentDomain, version: UInt64)] = []

    /// The last save of a process that says goodbye before it exits (a
    /// simulated app's exit event): every failure is reported now, before
    /// the goodbye, and the save at exit then leaves out every domain not
    /// changed since, instead of waiting for a stopped lock holder once more
    /// and reporting its failure after the goodbye. False if any change is unsaved.
    package func saveBeforeExit() -> Bool {
        let saved = synchronizeAll(reason: "before the process ends")
        let tried = openDomains.map { (domain: $0, version: $0.version.current) }
        lock.withLock { lastSave = tried }
        return saved
    }
}
