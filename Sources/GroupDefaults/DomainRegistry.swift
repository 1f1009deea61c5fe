import Foundation
import SharedFiles

/// A domain held without keeping it alive.
final class WeakDomain {
    weak var domain: PersistentDomain?
    init(_ domain: PersistentDomain) { self.domain = domain }
}

/// The process's open persistent domains, one object per file, each watched
/// for changes by `ChangeWatcher`. Domains are held weakly: when the last
/// instance using a domain goes, so does it (and, with it, its watch).
package final class DomainRegistry: @unchecked Sendable {
    package static let shared = DomainRegistry()

    private let lock = NSLock()
    private var domains: [String: WeakDomain] = [:]

    private init() {
        atexit {
            // A process that exits with a change it could not save must not
            // look successful: the status becomes 74 (EX_IOERR).
            if !DomainRegistry.shared.synchronizeAll(reason: "at exit") {
                fflush(nil)
                _exit(74)
            }
        }
    }

    /// The domain stored at `path`, opened if this process does not hold it yet.
    /// `root`: the folder the file must stay in, through real folders only (see `SharedPlistFile`).
    /// `contentCheck`: see `SharedPlistFile`; it is the file's from its first opening in the process.
    package func domain(named name: String, at path: String, root: String, contentCheck: SharedPlistFile.ContentCheck? = nil) throws -> PersistentDomain {
        // A released domain's last changes land before the file is opened again.
        PersistentDomain.waitForReleasedCommits()
        let (domain, isNew) = try lock.withLock { () throws -> (PersistentDomain, Bool) in
            if let existing = domains[path]?.domain { return (existing, false) }
            let domain = PersistentDomain(name: name, file: try SharedPlistFile(path: path, root: root, contentCheck: contentCheck))
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

    /// Commits every domain's pending edits (used at exit and on SIGINT/SIGTERM),
    /// reporting each failure through `Diagnostics`. False if any change is unsaved.
    @discardableResult
    package func synchronizeAll(reason: String = "before the process ends") -> Bool {
        var saved = true
        for domain in openDomains {
            do { try domain.synchronize() } catch {
                saved = false
                Diagnostics.report(Diagnostic(
                    kind: .commitFailed,
                    message: "could not save domain \(domain.name) to '\(domain.file.path)' \(reason): \(error); the change is lost",
                    path: domain.file.path))
            }
        }
        PersistentDomain.waitForReleasedCommits()
        return saved
    }
}
