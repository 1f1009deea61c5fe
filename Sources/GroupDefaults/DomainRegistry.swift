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
public final class DomainRegistry: @unchecked Sendable {
    public static let shared = DomainRegistry()

    private let lock = NSLock()
    private var domains: [String: WeakDomain] = [:]

    private init() {
        atexit { DomainRegistry.shared.synchronizeAll() }
    }

    /// The domain stored at `path`, opened if this process does not hold it yet.
    /// `root`: the folder the file must stay in, through real folders only (see `SharedPlistFile`).
    public func domain(named name: String, at path: String, root: String) throws -> PersistentDomain {
        let (domain, isNew) = try lock.withLock { () throws -> (PersistentDomain, Bool) in
            if let existing = domains[path]?.domain { return (existing, false) }
            let domain = PersistentDomain(name: name, file: try SharedPlistFile(path: path, root: root))
            domains[path] = WeakDomain(domain)
            return (domain, true)
        }
        if isNew { ChangeWatcher.shared.watch(domain) }
        return domain
    }

    public var openDomains: [PersistentDomain] {
        lock.withLock {
            domains = domains.filter { $0.value.domain != nil }
            return domains.values.compactMap(\.domain)
        }
    }

    /// Commits every domain's pending edits; used at exit and on SIGINT/SIGTERM.
    public func synchronizeAll() {
        for domain in openDomains {
            do { try domain.synchronize() } catch {
                FileHandle.standardError.write(Data("groupsim: could not save domain \(domain.name) to '\(domain.file.path)' at exit: \(error)\n".utf8))
            }
        }
    }
}
