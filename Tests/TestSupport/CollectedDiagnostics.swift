import Foundation
import GroupDefaults

/// The diagnostics said while it lives, for checks after the fact.
///
/// Diagnostics are process-wide, and the suites of every test target run at
/// once in one test process: a handler swapped in by one test and put back by
/// another would lose diagnostics. So one handler, installed once, hands each
/// diagnostic to every collector alive (and, when there is none, to the
/// handler it replaced). A test looks only for messages naming its own keys
/// or paths.
/// Unchecked Sendable: the items are read and changed under `lock`.
package final class CollectedDiagnostics: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Diagnostic] = []

    package init() { DiagnosticsTap.shared.add(self) }

    deinit { DiagnosticsTap.shared.remove(ObjectIdentifier(self)) }

    package var all: [Diagnostic] { lock.withLock { items } }

    package func contains(_ kind: Diagnostic.Kind, _ text: String) -> Bool {
        all.contains { $0.kind == kind && $0.message.contains(text) }
    }

    fileprivate func receive(_ diagnostic: Diagnostic) { lock.withLock { items.append(diagnostic) } }
}

/// Unchecked Sendable: the collectors and the replaced handler are read and changed under `lock`.
private final class DiagnosticsTap: @unchecked Sendable {
    static let shared = DiagnosticsTap()

    private struct WeakCollector { weak var collector: CollectedDiagnostics? }

    private let lock = NSLock()
    private var collectors: [ObjectIdentifier: WeakCollector] = [:]
    private var replaced: (@Sendable (Diagnostic) -> Void)?

    private init() {
        replaced = Diagnostics.setHandler { diagnostic in DiagnosticsTap.shared.deliver(diagnostic) }
    }

    func add(_ collector: CollectedDiagnostics) {
        lock.withLock { collectors[ObjectIdentifier(collector)] = WeakCollector(collector: collector) }
    }

    func remove(_ id: ObjectIdentifier) {
        _ = lock.withLock { collectors.removeValue(forKey: id) }
    }

    private func deliver(_ diagnostic: Diagnostic) {
        let (alive, fallback) = lock.withLock { (collectors.values.compactMap(\.collector), replaced) }
        if alive.isEmpty { fallback?(diagnostic) }
        for collector in alive { collector.receive(diagnostic) }
    }
}
