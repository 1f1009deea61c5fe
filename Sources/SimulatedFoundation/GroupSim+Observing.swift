import AppProtocol
import Foundation
import GroupDefaults
import PropertyList

extension GroupSim {
    /// One change of a key's effective value, as key-value observing reports it.
    /// Unchecked Sendable: constants only; its `Any` values are property-list values (bridged Foundation objects), never changed once made.
    public struct KeyChange: @unchecked Sendable {
        public let key: String
        /// The effective value before (as `object(forKey:)` gave it), nil if absent.
        public let oldValue: Any?
        /// The effective value now, nil if absent.
        public let newValue: Any?
        /// Whether another process made the change (through the shared file).
        public let isFromAnotherProcess: Bool
        /// The change as stored, for a control channel's `delivery` events.
        let stored: DefaultsChange
    }

    /// Keeps an observer registered: `invalidate()` (or releasing it) stops delivery.
    ///
    /// It keeps the observed instance alive too, as Apple's observation does:
    /// `GroupSim.observe(UserDefaults(suiteName: group)!, …)`, or an instance
    /// from a computed `static var` that makes a new one at every use, goes
    /// on observing as long as the `Observation` is kept.
    /// Unchecked Sendable: constants only (the token locks its own cancellation).
    public final class Observation: @unchecked Sendable {
        private let token: DefaultsObservation
        private let observed: UserDefaults

        init(_ token: DefaultsObservation, observing observed: UserDefaults) {
            self.token = token
            self.observed = observed
        }

        /// Stops delivery; calling it again does nothing. Releasing the observation stops it too.
        public func invalidate() { token.cancel() }

        deinit { token.cancel() }
    }

    /// Tells `handler` of every change of `key`'s effective value in
    /// `defaults`, whichever process makes it, as key-value observing does on
    /// Apple platforms:
    ///
    /// - a change made in this process (through any instance) is delivered on
    ///   the thread that made it, before that `set` (or `register`,
    ///   `removeObject` …) returns;
    /// - a change made by another process is delivered once it reaches this
    ///   one (about a millisecond), on the library's notification queue;
    /// - writing the same value, or a value a higher domain hides (a launch
    ///   argument), tells nobody; an observer added after a change is not told
    ///   of it.
    ///
    /// Keep the returned `Observation`; delivery stops when it goes.
    /// - Parameters:
    ///   - defaults: The instance whose search list is watched.
    ///   - key: The key.
    ///   - handler: Called with each change of the key's effective value.
    /// - Returns: The observation.
    public static func observe(_ defaults: UserDefaults, _ key: String, _ handler: @escaping (KeyChange) -> Void) -> Observation {
        observe(defaults, key, reportingAs: .observe, handler)
    }

    /// `observe(_:_:_:)`, saying which mechanism the handler is to a control
    /// channel, if one serves (nil: the handler reports its own deliveries).
    static func observe(
        _ defaults: UserDefaults, _ key: String, reportingAs mechanism: DeliveryMechanism?, _ handler: @escaping (KeyChange) -> Void
    ) -> Observation {
        let box = HandlerBox(handler)
        let domain = defaults.groupDefaults.domainName
        let process = defaults.simulatedProcess
        return Observation(
            defaults.groupDefaults.observeSynchronously(key) { change in
                let keyChange = KeyChange(
                    key: change.key,
                    oldValue: change.old.map(FoundationBridge.object),
                    newValue: change.new.map(FoundationBridge.object),
                    isFromAnotherProcess: change.origin == .otherProcess,
                    stored: change)
                guard let mechanism else { return box.handler(keyChange) }
                ControlTap.delivering(mechanism, keyChange, domain: domain, from: process) { box.handler(keyChange) }
            }, observing: defaults)
    }
}

/// The caller's handler runs on the threads `observe` names, as a KVO
/// handler does; it is not required to be Sendable, as KVO's is not.
/// Unchecked Sendable: the handler is a constant, called on the queue the observer chose, as KVO calls a non-Sendable handler.
private final class HandlerBox: @unchecked Sendable {
    let handler: (GroupSim.KeyChange) -> Void
    init(_ handler: @escaping (GroupSim.KeyChange) -> Void) { self.handler = handler }
}
