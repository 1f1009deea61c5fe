import Foundation
import PropertyList

/// Things a simulated process tells its driver without being asked.
package enum AppEvent: Sendable, Equatable {
    case ready(info: [String: PlistValue])
    /// An effective value changed (this process or another made the change).
    case change(ValueChange)
    /// `didChangeNotification` was posted (changes made by this process).
    case notification(name: String)
    /// `NSUbiquitousKeyValueStore.didChangeExternallyNotification`: values
    /// arrived from the cloud (reason: server-change, initial-sync-change,
    /// quota-violation-change, account-change) for these keys.
    case cloudChange(reason: String, keys: [String])
    /// The widget rendered its card; `entry`: a user's widget (SimulatedWidgetKit) showed a timeline entry.
    case render(card: [CardLine], reason: String, entry: RenderedEntry? = nil)
    case warning(kind: String, message: String)
    /// An intent was performed. The built-in intents name the `key` they changed
    /// and its stored `value`; an App Intent (SimulatedAppIntents) has no key: its
    /// `value` is what `perform()` returned (`.result(value:)`), `dialog` its
    /// dialog's text, and `opensApp` its `openAppWhenRun`.
    case intentResult(intent: String, key: String?, value: PlistValue?, dialog: String? = nil, opensApp: Bool = false)
    /// An executable's own observer was called (the control channel of
    /// SimulatedFoundation; the simulated roles report `change` instead).
    case delivery(Delivery)
    /// Something made the process unable to go on (it exits next).
    case error(message: String)
    case exit(status: Int32)

    /// The event's name on the wire ("change", "render", "intent-result" …).
    package var name: String {
        switch self {
        case .ready: "ready"
        case .change: "change"
        case .notification: "notification"
        case .cloudChange: "cloud-change"
        case .render: "render"
        case .warning: "warning"
        case .intentResult: "intent-result"
        case .delivery: "delivery"
        case .error: "error"
        case .exit: "exit"
        }
    }
}

/// A change of one key's effective value, as the protocol carries it.
package struct ValueChange: Sendable, Equatable {
    package let key: String
    package let old: PlistValue?
    package let new: PlistValue?
    /// "this-process" or "other-process".
    package let origin: String
    /// The domain that was written to.
    package let domain: String
    /// The domain the new effective value comes from (nil if the key is now absent).
    package let valueDomain: String?

    package init(key: String, old: PlistValue?, new: PlistValue?, origin: String, domain: String, valueDomain: String?) {
        self.key = key
        self.old = old
        self.new = new
        self.origin = origin
        self.domain = domain
        self.valueDomain = valueDomain
    }
}

/// One line of a widget's card: a shown key, its value and where it came from.
package struct CardLine: Sendable, Equatable {
    package let key: String
    package let value: PlistValue?
    package let domain: String?

    package init(key: String, value: PlistValue?, domain: String?) {
        self.key = key
        self.value = value
        self.domain = domain
    }
}

/// The timeline entry a user's widget shows (SimulatedWidgetKit's host): the
/// widget's kind and the entry's date on the device's clock. The built-in
/// widget's renders have none.
package struct RenderedEntry: Sendable, Equatable {
    package let kind: String
    package let date: Date

    package init(kind: String, date: Date) {
        self.kind = kind
        self.date = date
    }
}

/// Where events go: the JSON protocol or the console.
package protocol AppEventSink: Sendable {
    func emit(_ event: AppEvent)
}
