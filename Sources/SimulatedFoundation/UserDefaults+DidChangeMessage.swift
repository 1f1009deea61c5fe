import Foundation
import Synchronization

extension UserDefaults {
    /// Apple's message for a change of a setting (iOS 26 and later: "A message
    /// the system sends when a user-defaults setting changes"), the typed twin
    /// of `didChangeNotification`, observed with
    /// `NotificationCenter.default.addObserver(of: defaults, for: .didChange) { message in … }`.
    ///
    /// Posted with `didChangeNotification`, for the same changes, but only in
    /// a process that has observed it: Foundation on Linux has the message API
    /// but no bridge from the notification, and a second post costs about
    /// 6,900 instructions, more than a whole `set`; a process that never
    /// observes the message pays one atomic load per change (docs/api.md).
    public struct DidChangeMessage: NotificationCenter.AsyncMessage, Sendable {
        public typealias Subject = UserDefaults
        /// The message (it carries nothing; its subject is the instance that changed).
        public init() {}
    }

    /// Whether this process has ever observed `DidChangeMessage`: from the
    /// first observation on, every change posts the message too. Never reset:
    /// telling when the last observer went would mean wrapping Foundation's
    /// tokens, and a process that observed once is the one that wants it.
    static let didChangeMessageObserved = Atomic<Bool>(false)

    /// Posts `DidChangeMessage` for this instance if the process observes it.
    func postDidChangeMessageIfObserved() {
        guard Self.didChangeMessageObserved.load(ordering: .relaxed) else { return }
        NotificationCenter.default.post(DidChangeMessage(), subject: self)
    }
}

extension NotificationCenter.MessageIdentifier where Self == NotificationCenter.BaseMessageIdentifier<UserDefaults.DidChangeMessage> {
    /// Apple's identifier for `UserDefaults.DidChangeMessage`.
    public static var didChange: Self { .init() }
}

/// The observation calls of `UserDefaults.DidChangeMessage`, with Apple's
/// shapes: more specific than Foundation's generic ones, so Swift picks these,
/// which note that the process observes the message and hand on to Foundation.
extension NotificationCenter {
    /// Foundation's `addObserver(of:for:using:)` for `DidChangeMessage` of one instance; from the first call on, this process posts the message with each `didChangeNotification`.
    /// - Parameters:
    ///   - subject: The instance to observe.
    ///   - identifier: `.didChange`.
    ///   - observer: Called with each message.
    /// - Returns: Foundation's token; removing it stops the observation.
    public func addObserver(
        of subject: UserDefaults, for identifier: NotificationCenter.BaseMessageIdentifier<UserDefaults.DidChangeMessage>,
        using observer: @escaping @Sendable (UserDefaults.DidChangeMessage) async -> Void
    ) -> NotificationCenter.ObservationToken {
        UserDefaults.didChangeMessageObserved.store(true, ordering: .relaxed)
        return foundationObserver(of: subject, for: identifier, using: observer)
    }

    /// Foundation's `addObserver(of:for:using:)` for `DidChangeMessage` of every instance; from the first call on, this process posts the message with each `didChangeNotification`.
    /// - Parameters:
    ///   - subject: `UserDefaults.self`.
    ///   - identifier: `.didChange`.
    ///   - observer: Called with each message.
    /// - Returns: Foundation's token; removing it stops the observation.
    public func addObserver(
        of subject: UserDefaults.Type, for identifier: NotificationCenter.BaseMessageIdentifier<UserDefaults.DidChangeMessage>,
        using observer: @escaping @Sendable (UserDefaults.DidChangeMessage) async -> Void
    ) -> NotificationCenter.ObservationToken {
        UserDefaults.didChangeMessageObserved.store(true, ordering: .relaxed)
        return foundationObserver(of: subject, for: identifier, using: observer)
    }

    /// Foundation's own observation: called from a generic context, so it is Foundation's generic method, not the ones above.
    private func foundationObserver<Identifier: NotificationCenter.MessageIdentifier, Message: NotificationCenter.AsyncMessage>(
        of subject: Message.Subject, for identifier: Identifier, using observer: @escaping @Sendable (Message) async -> Void
    ) -> NotificationCenter.ObservationToken where Identifier.MessageType == Message, Message.Subject: AnyObject {
        addObserver(of: subject, for: identifier, using: observer)
    }

    private func foundationObserver<Identifier: NotificationCenter.MessageIdentifier, Message: NotificationCenter.AsyncMessage>(
        of subject: Message.Subject.Type, for identifier: Identifier, using observer: @escaping @Sendable (Message) async -> Void
    ) -> NotificationCenter.ObservationToken where Identifier.MessageType == Message, Message.Subject: AnyObject {
        addObserver(of: subject, for: identifier, using: observer)
    }
}
