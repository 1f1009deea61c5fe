import Foundation

/// Commits pending changes when the process is asked to stop (SIGINT,
/// SIGTERM) and then exits with the conventional status 128+signal. Normal
/// exit is covered by `DomainRegistry`'s atexit handler.
public enum TerminationFlush {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []
    private static let lock = NSLock()

    /// Installs the handlers once; `beforeExit` runs after the flush (to say goodbye).
    public static func install(beforeExit: (@Sendable (Int32) -> Void)? = nil) {
        lock.withLock {
            guard sources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    DomainRegistry.shared.synchronizeAll()
                    beforeExit?(signalNumber)
                    exit(128 + signalNumber)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
