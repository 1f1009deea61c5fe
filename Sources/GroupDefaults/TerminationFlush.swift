import Foundation
import Guarded

/// Commits pending changes when the process is asked to stop (SIGINT,
/// SIGTERM) and then exits with the conventional status 128+signal. Normal
/// exit is covered by `DomainRegistry`'s atexit handler.
///
/// The flush is bounded: a domain whose commit waits on a lock held by a
/// stopped or hung process must not keep the process from stopping. Domains
/// not saved within `flushLimit` are named through `Diagnostics`, and the
/// process exits anyway.
package enum TerminationFlush {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    private static let lock = Locked()

    /// How long a stop request waits for the pending changes to be saved.
    public static let flushLimit: TimeInterval = 2

    /// Installs the handlers once; `beforeExit` runs after the flush (to say goodbye).
    public static func install(beforeExit: (@Sendable (Int32) -> Void)? = nil) {
        lock.withLock {
            guard sources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    for (domain, problem) in flush(DomainRegistry.shared.openDomains, within: flushLimit) {
                        Diagnostics.report(
                            Diagnostic(
                                kind: .commitFailed,
                                message:
                                    "stopping on signal \(signalNumber) without saving domain \(domain.name) to '\(domain.file.path)': \(problem). Its unsaved changes are lost.",
                                path: domain.file.path))
                    }
                    beforeExit?(signalNumber)
                    // _exit, not exit: the atexit flush would wait on the same lock again
                    // (and stdio's exit-time flush on stdin's lock, held by a blocked read).
                    // Events and diagnostics are written unbuffered, so nothing is left unsaid.
                    _exit(128 + signalNumber)
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Synchronizes every domain at once, each on its own thread, and returns
    /// those not saved within `limit`, with why.
    static func flush(_ domains: [PersistentDomain], within limit: TimeInterval) -> [(PersistentDomain, String)] {
        let outcomes = Outcomes()
        let done = DispatchGroup()
        for domain in domains {
            done.enter()
            // A thread each: a commit stuck on a lock must not hold up the others.
            Thread {
                do {
                    try domain.synchronize()
                    outcomes.record(domain, problem: nil)
                } catch {
                    outcomes.record(domain, problem: "\(error)")
                }
                done.leave()
            }.start()
        }
        _ = done.wait(timeout: .now() + limit)
        return domains.compactMap { domain in
            switch outcomes.outcome(of: domain) {
            case .none: (domain, "its commit did not finish within \(Int(limit)) s (is the file lock held by a stopped process?)")
            case .some(.none): nil
            case .some(.some(let problem)): (domain, problem)
            }
        }
    }

    /// Each domain's flush result: nil while running, .some(nil) when saved, .some(problem) when it failed.
    /// The flushing threads record at once.
    private final class Outcomes: Sendable {
        private let problems = Locked<[ObjectIdentifier: String?]>([:])

        func record(_ domain: PersistentDomain, problem: String?) {
            problems.withLock { $0[ObjectIdentifier(domain)] = .some(problem) }
        }

        func outcome(of domain: PersistentDomain) -> String?? {
            problems.withLock { $0[ObjectIdentifier(domain)] }
        }
    }
}
