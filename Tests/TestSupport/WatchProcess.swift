import AppProtocol
@_exported import ChildProcess
import Foundation
import PropertyList

/// `groupsim defaults watch --json DOMAIN` as a real observer process. Its
/// lines are read by `ControlProtocol.decode`, the protocol's one decoder.
/// Unchecked Sendable: its state belongs to the test's thread, which alone waits on it; `RunningProcess` guards its own.
package final class WatchProcess: @unchecked Sendable {
    package let process: RunningProcess

    /// One line of the watch output.
    package enum Line: Sendable, CustomStringConvertible {
        /// A protocol event (ready, change, warning …).
        case event(AppEvent, raw: String)
        /// A line the protocol's decoder does not know: the watch's own
        /// `overflow` notice (the event queue overflowed and every value was
        /// reloaded), with the decoder's reason.
        case unknown(reason: String, raw: String)

        package var event: AppEvent? { if case .event(let event, _) = self { event } else { nil } }
        package var change: ValueChange? { if case .change(let change)? = event { change } else { nil } }
        /// The watch's overflow notice: the one line it writes that is not an `AppEvent`.
        package var isOverflow: Bool {
            guard case .unknown(_, let raw) = self, let object = try? PlistJSON.parseObject(raw, maximumFieldDepth: 2) else { return false }
            return object["event"]?.stringValue == "overflow"
        }
        package var description: String {
            switch self {
            case .event(_, let raw), .unknown(_, let raw): raw
            }
        }
    }

    /// `groupsim defaults watch --json DOMAIN`; with `heldUntilInput`, the test
    /// tool's variant whose watcher thread waits for a line on stdin once ready.
    package init(root: TemporaryRoot, domain: String, heldUntilInput: Bool = false) throws {
        process = try RunningProcess(
            heldUntilInput ? BuiltExecutable.path("groupsim-stress") : BuiltExecutable.path("groupsim"),
            (heldUntilInput ? ["watch-held", "--json"] : ["defaults", "watch", "--json"]) + [domain],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
        _ = try nextLine { if case .ready? = $0.event { true } else { false } }
    }

    package static func parse(_ line: String) -> Line {
        do {
            if case .event(let event, _) = try ControlProtocol.decode(line).message { return .event(event, raw: line) }
            return .unknown(reason: "a response, not an event", raw: line)
        } catch {
            return .unknown(reason: "\(error)", raw: line)
        }
    }

    /// Waits for (and consumes lines up to) the first line satisfying `predicate`.
    @discardableResult
    package func nextLine(timeout: TimeInterval = 20, where predicate: (Line) -> Bool) throws -> Line {
        var matched: Line? = nil
        try process.waitForLine(timeout: timeout) { text in
            let line = Self.parse(text)
            guard predicate(line) else { return false }
            matched = line
            return true
        }
        guard let matched else { throw TestFailure("no matching line") }
        return matched
    }

    /// Waits for a warning; returns its kind and message.
    package func warning(timeout: TimeInterval = 20) throws -> (kind: String, message: String) {
        let line = try nextLine(timeout: timeout) { if case .warning? = $0.event { true } else { false } }
        guard case .warning(let kind, let message)? = line.event else { throw TestFailure("not a warning: \(line)") }
        return (kind, message)
    }

    /// Waits for the change that sets `key` to `value`; returns every change consumed on the way.
    @discardableResult
    package func waitForChange(_ key: String, to value: PlistValue?, timeout: TimeInterval = 20) throws -> [ValueChange] {
        var seen: [ValueChange] = []
        try process.waitForLine(timeout: timeout) { text in
            guard let change = Self.parse(text).change else { return false }
            seen.append(change)
            return change.key == key && change.new == value
        }
        return seen
    }

    package func stop() throws {
        process.signal(SIGTERM)
        try process.waitForExit()
    }
}
