import Foundation
import GroupDefaults
import Guarded

/// The part of UIKit's `UIApplication` that says whether protected data is
/// available: false from a reboot of the device until its first unlock, when
/// the app's preferences cannot be read (they read as absent). Code launched
/// ahead of time (prewarming, a background launch, a widget, an intent)
/// checks it before trusting what it reads, and waits for
/// `protectedDataDidBecomeAvailableNotification` when it is false.
/// Unchecked Sendable: `watch` is set once, in `init`; `state` is read and changed under `lock`.
public final class UIApplication: @unchecked Sendable {
    /// Posted on `NotificationCenter.default` (object: `shared`) when the
    /// device is first unlocked after a reboot while this process runs.
    public static let protectedDataDidBecomeAvailableNotification = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")

    /// This process's application; it watches the device's state from its first use.
    public static let shared = UIApplication(process: .current)

    private let process: SimulatedProcess
    private let lock = Locked()
    private var available: Bool
    private var watch: AvailabilityWatch?

    /// The application of another simulated process (`GroupSim.application(of:)`).
    init(process: SimulatedProcess) {
        self.process = process
        let identity = process.identity
        available = (try? ProtectedData.state(root: identity.root, device: identity.device).isAvailable) ?? true
        guard !available else { return }
        watch = try? ProtectedData.whenAvailable(root: identity.root, device: identity.device) { [weak self] in self?.becameAvailable() }
    }

    /// Whether the device's protected data (the app's preferences) can be read now.
    public var isProtectedDataAvailable: Bool {
        let identity = process.identity
        let now = (try? ProtectedData.state(root: identity.root, device: identity.device).isAvailable) ?? true
        if now { becameAvailable() }
        return now
    }

    private func becameAvailable() {
        let changed = lock.withLock { () -> Bool in
            defer { available = true }
            return !available
        }
        if changed { NotificationCenter.default.post(name: Self.protectedDataDidBecomeAvailableNotification, object: self) }
    }
}
