import Foundation
import Guarded
import PropertyList
import SharedFiles
import SimulationValues

/// Data protection of a device's containers after a reboot, as iOS applies
/// NSFileProtectionCompleteUntilFirstUserAuthentication to an app's
/// container (and so to its preferences): until the person first unlocks the
/// device, a process launched anyway (prewarming, a background launch, a
/// widget, an intent) cannot read them. Its persisted domains read as absent
/// (registered defaults and launch arguments still apply), and it keeps that
/// empty view until it is relaunched.
///
/// The state is two keys of the device's `device.plist`, written by
/// `groupsim device reboot|unlock` and the scenario steps of the same
/// names; a process consults it when it first opens a domain, never on a read.
package enum ProtectedData {
    /// The key of `device.plist` that says whether the device was rebooted and not unlocked since.
    package static let stateKey = "protectedData"
    /// The key that says which protection the containers have (`Protection`).
    package static let protectionKey = "dataProtection"

    /// The file protection of the device's containers.
    package typealias Protection = DataProtection

    /// The device's state as its `device.plist` says (absent: unlocked).
    package struct State: Equatable, Sendable {
        package var locked: Bool
        package var protection: Protection

        package init(locked: Bool, protection: Protection) {
            self.locked = locked
            self.protection = protection
        }

        /// Whether a process may read and write its containers' files now.
        package var isAvailable: Bool { !locked || protection == .none }

        /// For `groupsim device list`.
        package var summary: String {
            guard locked else { return "unlocked" }
            return protection == .none
                ? "rebooted, not unlocked yet (data protection none: preferences readable)"
                : "locked: rebooted, not unlocked yet (preferences unreadable until the first unlock)"
        }

        init(_ contents: [String: PlistValue], path: String) throws {
            locked = contents[stateKey]?.stringValue == "locked"
            let name = contents[protectionKey]?.stringValue ?? Protection.untilFirstUnlock.rawValue
            guard let protection = Protection(rawValue: name) else {
                throw DefaultsError.invalidDeviceState(
                    path: path, reason: "\(protectionKey) '\(name)' is not one of \(Protection.allCases.map(\.rawValue))")
            }
            self.protection = protection
        }
    }

    /// The device's `device.plist`.
    package static func path(root: SimulationRoot, device: String) throws -> String { try root.devicePath(device) + "/device.plist" }

    /// The device's state now (a device without metadata is unlocked).
    package static func state(root: SimulationRoot, device: String) throws -> State {
        let path = try path(root: root, device: device)
        return try State(SharedPlistFile.read(path: path, root: root.path) ?? [:], path: path)
    }

    /// Reboots the device (locked until `unlock`) or unlocks it; running processes keep what they read.
    package static func set(root: SimulationRoot, device: String, locked: Bool, protection: Protection? = nil) throws {
        let file = try SharedPlistFile(path: path(root: root, device: device), root: root.path)
        try file.update { contents in
            contents[stateKey] = .string(locked ? "locked" : "unlocked")
            if let protection { contents[protectionKey] = .string(protection.rawValue) }
        }
    }

    /// The device's metadata as a domain this process watches (read only), so
    /// a change of the state reaches it as a change of `stateKey`.
    package static func watchedMetadata(root: SimulationRoot, device: String) throws -> PersistentDomain {
        try DomainRegistry.shared.domain(named: "device \(device)", at: path(root: root, device: device), root: root.path, readOnly: true)
    }

    /// Calls `body` once, on the notification queue, when the device's
    /// protected data becomes available (at once if it is); the returned
    /// token keeps the watch and cancels it when released.
    package static func whenAvailable(root: SimulationRoot, device: String, _ body: @escaping @Sendable () -> Void) throws -> AvailabilityWatch {
        let metadata = try watchedMetadata(root: root, device: device)
        let watch = AvailabilityWatch(metadata: metadata, body: body)
        let path = metadata.file.path
        watch.listener = metadata.addListener { [weak watch] _ in
            guard let watch, let state = try? State(metadata.snapshot(), path: path), state.isAvailable else { return }
            watch.fire()
        }
        if try State(metadata.snapshot(), path: path).isAvailable { watch.fire() }
        return watch
    }

    /// Waits until the device's protected data is available (true), or `timeout` seconds (false).
    package static func waitUntilAvailable(root: SimulationRoot, device: String, timeout: Double) throws -> Bool {
        let available = LockedCondition(false)
        let watch = try whenAvailable(root: root, device: device) { available.withLock { $0 = true } }
        defer { withExtendedLifetime(watch) {} }
        return available.wait(atMost: timeout) { $0 }
    }
}

/// A watch of a device's protected data: fires its body once.
/// Unchecked Sendable: `fired` is changed under `lock`; `listener` is set once, before the watch is shared.
package final class AvailabilityWatch: @unchecked Sendable {
    private let metadata: PersistentDomain
    private let body: @Sendable () -> Void
    private let lock = Locked()
    private var fired = false
    fileprivate var listener: Int?

    fileprivate init(metadata: PersistentDomain, body: @escaping @Sendable () -> Void) {
        self.metadata = metadata
        self.body = body
    }

    fileprivate func fire() {
        let first = lock.withLock { () -> Bool in
            defer { fired = true }
            return !fired
        }
        if first { body() }
    }

    deinit { if let listener { metadata.removeListener(listener) } }
}

extension DefaultsContext {
    /// Whether this process's domains open unreadable: the device was rebooted
    /// and not unlocked since (never for a tool's context). Read when a domain is first opened.
    func protectedDataLocked() throws -> Bool {
        try isOnDevice && !ProtectedData.state(root: root, device: device).isAvailable
    }
}
