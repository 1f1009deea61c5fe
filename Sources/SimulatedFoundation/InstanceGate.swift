import Foundation
import Guarded

/// Hands a `UserDefaults` instance to a callback from another thread without
/// a weak reference to it until the first call: a weak reference moves an
/// object's reference counts to a side table for good, and every retain and
/// release of the instance on the path of a `set` then takes the runtime's
/// slow path (0.55 µs more per set, benchmarks/results.md). Most instances
/// are never called back (a managed-preferences change is rare), so they never
/// pay it.
///
/// Safe without a weak reference until then: the instance closes the gate in
/// its `deinit`, under the lock, so the unretained pointer is valid whenever
/// the gate is open. An instance whose last reference went away but whose
/// `deinit` has not closed the gate yet is still valid memory; the weak
/// reference made from it then reads nil, so it is never handed out.
final class InstanceGate<Instance: AnyObject>: @unchecked Sendable {
    private final class WeakReference {
        weak var instance: Instance?
        init(_ instance: Instance) { self.instance = instance }
    }

    private let lock = Locked()
    private let unretained: Unmanaged<Instance>
    /// Made at the first call, under `lock`.
    private var reference: WeakReference?
    private var closed = false

    init(_ instance: Instance) { unretained = Unmanaged.passUnretained(instance) }

    /// The instance, retained, or nil once it is going away.
    func instance() -> Instance? {
        lock.withLock {
            guard !closed else { return nil }
            if reference == nil { reference = WeakReference(unretained.takeUnretainedValue()) }
            return reference?.instance
        }
    }

    /// Called from the instance's `deinit`: no call gets it after this returns.
    func close() { lock.withLock { closed = true } }
}
