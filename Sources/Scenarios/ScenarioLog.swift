import AppProtocol
import Foundation
import Guarded
import PropertyList
import ScenarioModel
import SharedFiles

/// Something that happened during a run: an event a process emitted, a
/// response, or an action of the runner itself. Times are nanoseconds since
/// the scenario started, taken when the runner received or did it.
package struct RecordedEvent: Sendable {
    package enum Kind: String, Sendable {
        /// `output`: a line a user's executable wrote (its `stream` field says where).
        case event, response, action, exit, stderr, output
    }
    package let time: UInt64
    package let process: String
    package let kind: Kind
    /// The event's name ("change", "render" …), the action's step keyword, or "response".
    package let name: String
    /// The JSON fields (null fields are left out): as the process wrote them,
    /// or what the runner noted of its own action.
    package let fields: [String: PlistValue]
    /// A short human text.
    package let text: String
    /// The event a process sent (or its exit, as the runner saw it), decoded.
    package let appEvent: AppEvent?

    /// The key an event or action is about: a change's key, an intent's, or the key a step wrote.
    package var key: String? {
        switch appEvent {
        case .change(let change)?: change.key
        case .intentResult(_, let key, _, _, _)?: key
        case .delivery(let delivery)?: delivery.key
        default: kind == .action ? fields["key"]?.stringValue : nil
        }
    }

    /// A change event, if this is one.
    package var change: ValueChange? { if case .change(let change)? = appEvent { change } else { nil } }

    /// A response's fields, typed.
    package var response: ProtocolResponse? { kind == .response ? ProtocolResponse(fields: fields) : nil }
}

/// Every recorded event of one scenario run, in order, and the lanes
/// (processes, tools, the cloud) in the order they first appeared.
/// Unchecked Sendable: the entries and the lane order are under `lock`; `start` is set once.
package final class ScenarioLog: @unchecked Sendable {
    package let start: UInt64
    /// What the times are read from, and what the run's waits count on.
    package let clock: any RunnerClock
    private let lock = Locked()
    private var entries: [RecordedEvent] = []
    private var laneOrder: [String] = []

    package init(clock: any RunnerClock = SystemRunnerClock()) {
        self.clock = clock
        start = clock.now()
    }

    package var now: UInt64 { clock.now() - start }

    @discardableResult
    func record(
        process: String, kind: RecordedEvent.Kind, name: String, fields: [String: PlistValue] = [:], text: String,
        appEvent: AppEvent? = nil, began: UInt64? = nil
    ) -> RecordedEvent {
        // `began`: when the process stamped it (CLOCK_MONOTONIC), taken if it is within the run and not after now.
        var time = now
        if let began, began >= start { time = min(time, began - start) }
        let event = RecordedEvent(time: time, process: process, kind: kind, name: name, fields: fields, text: text, appEvent: appEvent)
        lock.withLock { entries.append(event) }
        return event
    }

    package var all: [RecordedEvent] { lock.withLock { entries } }

    /// The lanes in the order they were opened.
    var lanes: [String] { lock.withLock { laneOrder } }

    func openLane(_ name: String) {
        lock.withLock { if !laneOrder.contains(name) { laneOrder.append(name) } }
    }

    /// Records a step the runner takes on a lane (a process, "files", "defaults", the cloud).
    func action(_ lane: String, _ step: Step, key: String? = nil, value: PlistValue? = nil) {
        openLane(lane)
        var fields: [String: PlistValue] = [:]
        if let key { fields["key"] = .string(key) }
        if let value { fields["value"] = value }
        record(process: lane, kind: .action, name: step.keyword, fields: fields, text: step.summary)
    }
}

extension EventMatcher {
    /// Whether a recorded event is the one this matcher describes.
    func matches(_ event: RecordedEvent) -> Bool {
        guard event.kind == .event || event.kind == .exit, let appEvent = event.appEvent else { return false }
        // A user's executable has no change events: a change is its observers' delivery of it, and a
        // cloud-change its didChangeExternallyNotification's (reason and keys as the notification's).
        var delivery: Delivery?
        if case .delivery(let delivered) = appEvent { delivery = delivered }
        let isCloudNotice = delivery?.mechanism == .didChangeExternally
        guard
            event.name == self.event || (self.event == "change" && delivery != nil && !isCloudNotice)
                || (self.event == "cloud-change" && isCloudNotice)
        else { return false }
        if let key, event.key != key { return false }
        if let value, (event.change?.new ?? delivery?.new) != value { return false }
        if let origin, (event.change?.origin ?? delivery?.origin) != origin { return false }
        if let mechanism, delivery?.mechanism.rawValue != mechanism { return false }
        if let reason {
            switch appEvent {
            case .render(_, let found, _), .cloudChange(let found, _): if found != reason { return false }
            case .delivery(let delivered) where delivered.reason != nil: if delivered.reason != reason { return false }
            default: return false
            }
        }
        if let message {
            switch appEvent {
            case .warning(_, let found), .error(let found): if !found.contains(message) { return false }
            default: return false
            }
        }
        if let valueDomain, event.change?.valueDomain != valueDomain { return false }
        if let keys {
            switch appEvent {
            case .cloudChange(_, let found): if !Set(keys).isSubset(of: found) { return false }
            case .delivery(let delivered) where isCloudNotice: if !Set(keys).isSubset(of: delivered.keys) { return false }
            default: return false
            }
        }
        if let kind {
            guard case .warning(let found, _) = appEvent, found == kind else { return false }
        }
        if let status {
            guard case .exit(let found) = appEvent, Int(found) == status else { return false }
        }
        if let card {
            let shown = Self.card(of: appEvent)
            for (key, expected) in card where (shown[key] ?? nil) != expected { return false }
        }
        return true
    }

    /// A render event's card as key → value (nil for absent).
    static func card(of event: AppEvent) -> [String: PlistValue?] {
        guard case .render(let lines, _, _) = event else { return [:] }
        var card: [String: PlistValue?] = [:]
        for line in lines { card[line.key] = line.value }
        return card
    }
}
