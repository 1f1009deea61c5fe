import DeviceState
import Foundation
import GroupDefaults
import Guarded
import PropertyList

/// The time the agent's upload interval counts on: the monotonic clock plus
/// how far the device's simulated clock (`DeviceClock`) was advanced. A
/// device whose clock is never advanced counts real time, so an interval
/// set by hand is waited for for real; `advance-clock` (or `groupsim device
/// clock --advance`) moves the device's time on at once, and an upload held
/// for an interval that has passed on that clock goes without a real wait.
/// The clock's file is watched: a change wakes the agent and has the offset
/// read again (strictly, a damaged file said once); no turn of the agent's
/// loop reads the file otherwise. Unchecked Sendable: its state is under `lock`.
final class DeviceTime: @unchecked Sendable {
    private let clock: DeviceClock
    private let lock = Locked()
    /// Set when the clock's file changed: the next `now` reads it again.
    private var moved = true
    /// The offset last read well, in seconds; a damaged file keeps it.
    private var offset: Double = 0
    private var reportedProblem: String?
    /// Held so the watch lasts (the registry keeps domains weakly).
    private var domain: PersistentDomain?

    /// `wake`: called when the clock's file changes (the agent's loop then looks again).
    init(clock: DeviceClock, wake: @escaping @Sendable () -> Void) throws {
        self.clock = clock
        let domain = try DomainRegistry.shared.domain(named: "clock of \(clock.device)", at: try clock.path, root: clock.root.path, readOnly: true)
        domain.addListener { [weak self] _ in
            self?.lock.withLock { self?.moved = true }
            wake()
        }
        self.domain = domain
    }

    /// The device's time now, as an instant of the monotonic clock moved on by the clock's offset.
    func now(events: (String, [String: PlistValue]) -> Void) -> ContinuousClock.Instant {
        let reread = lock.withLock { () -> Bool in
            defer { moved = false }
            return moved
        }
        if reread {
            do {
                let read = try clock.offset()
                lock.withLock {
                    offset = read
                    reportedProblem = nil
                }
            } catch {
                let (problem, repeated) = lock.withLock { () -> (String, Bool) in
                    let problem = "\(error); the upload interval counts from the clock's last offset read, \(offset) s"
                    defer { reportedProblem = problem }
                    return (problem, reportedProblem == problem)
                }
                if !repeated { events("problem", ["message": .string(problem)]) }
            }
        }
        return .now + .seconds(lock.withLock { offset })
    }
}
