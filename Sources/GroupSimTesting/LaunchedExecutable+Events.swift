import AppProtocol
import Foundation
import PropertyList

/// The waits on what the program's control channel reported: its observers'
/// deliveries and its warnings, each taken once, by the positive waits and
/// the negative ones alike.
extension LaunchedExecutable {
    /// Waits until one of the program's observers is told that `key` now
    /// has `value` (any value, when nil), by `mechanism` (any, when nil), and
    /// returns that delivery: which observer fired, the old and new values,
    /// and whether the change came from this process or another. Deliveries
    /// that came before the call count too (each is returned once), so a
    /// change that arrived early is never missed.
    /// - Parameters:
    ///   - key: The key.
    ///   - value: The new value the delivery must carry (nil: any).
    ///   - mechanism: The kind of observer it must go to (nil: any).
    ///   - timeout: How long to wait at most.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when no such delivery comes within `timeout`, or the program ends or has no control channel.
    /// - Returns: The delivery, taken: a later wait does not return it again.
    @discardableResult
    public func waitForChange(
        key: String, value: Value? = nil, mechanism: DeliveryMechanism? = nil, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> Delivery
    {
        let wanted = Self.describe(key: key, value: value, mechanism: mechanism)
        return try await waitForDelivery(wanted, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)) {
            Self.delivery($0, of: key, value: value, mechanism: mechanism)
        }
    }

    /// The negative of `waitForChange`: fails, at the caller's line and as
    /// soon as it comes, if one of the program's observers is told of `key`
    /// (with `value`, by `mechanism`, when given) within `within`, naming that
    /// delivery (its mechanism and values). A delivery that came before the
    /// call and that no wait took counts too: take the ones you expect first.
    /// Returns early, passed, once the program has ended (nothing more can come).
    /// - Parameters:
    ///   - key: The key.
    ///   - value: Only a delivery with this new value counts (nil: any).
    ///   - mechanism: Only a delivery to this kind of observer counts (nil: any).
    ///   - within: How long to watch.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, as soon as such a delivery comes, naming it; or when the program has no control channel.
    public func expectNoChange(
        key: String, value: Value? = nil, mechanism: DeliveryMechanism? = nil, within: Duration,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        let unwanted = Self.describe(key: key, value: value, mechanism: mechanism)
        guard hasControlChannel else { throw channelMissing(for: "expectNoChange(key: \(key))", at: place) }
        let seconds = within.seconds
        let take = { @Sendable [record, outcome, name] (timeout: Double) throws in
            let found = record.takeEvent(timeout: timeout) { event -> Delivery? in
                guard case .delivery(let delivery) = event else { return nil }
                return Self.delivery(delivery, of: key, value: value, mechanism: mechanism) ? delivery : nil
            }
            guard let delivery = found.found else { return }
            throw outcome.failure("\(name): expected no \(unwanted) within \(seconds) s, but its observer was told: \(delivery)", at: place)
        }
        try await Blocking.run { try take(seconds) }
        // An observer called within the time (or before) that has not returned yet counts too: its delivery is taken in.
        try await catchUpEvents(for: "expectNoChange(key: \(key))", timeout: .seconds(20), at: place)
        try take(0)
    }

    /// Waits until the program's `NSUbiquitousKeyValueStore` posts
    /// `didChangeExternallyNotification` for a change that includes `key`
    /// (values from another device, the first download, an account change; with
    /// `reason`, only that one: "server-change", "initial-sync-change" …), and
    /// returns that delivery (`reason`, `keys`). Earlier ones count, each once.
    /// - Parameters:
    ///   - key: A key the notification must name.
    ///   - reason: Its reason (`server-change`, `initial-sync-change`, `quota-violation-change`, `account-change`; nil: any).
    ///   - timeout: How long to wait at most.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when no such notification comes within `timeout`, or the program ends or has no control channel.
    /// - Returns: The notification, as a `Delivery` with its `reason` and `keys`.
    @discardableResult
    public func waitForCloudChange(
        key: String, reason: String? = nil, timeout: Duration = .seconds(20),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws
        -> Delivery
    {
        let wanted = "iCloud change" + (reason.map { " (\($0))" } ?? "") + " of \(key)"
        return try await waitForDelivery(wanted, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)) {
            delivery in
            delivery.mechanism == .didChangeExternally && delivery.keys.contains(key) && (reason == nil || delivery.reason == reason)
        }
    }

    /// Waits until the program says a warning of `kind` (`missing-entitlement`,
    /// `launch-argument`, `corrupt-file-moved-aside` …) and returns its message.
    /// Warnings said before the call count too, each once.
    /// - Parameters:
    ///   - kind: The warning's kind (`missing-entitlement`, `launch-argument` …).
    ///   - timeout: How long to wait at most.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when no such warning comes within `timeout`, or the program ends or has no control channel.
    /// - Returns: The warning's message.
    @discardableResult
    public func waitForWarning(
        kind: String, timeout: Duration = .seconds(10),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> String {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        guard hasControlChannel else { throw channelMissing(for: "waitForWarning(kind: \(kind))", at: place) }
        let seconds = timeout.seconds
        return try await Blocking.run { [record, outcome, name] in
            let found = record.takeEvent(timeout: seconds) { event -> String? in
                if case .warning(kind, let message) = event { message } else { nil }
            }
            if let message = found.found { return message }
            let said = record.events.compactMap { if case .warning(let kind, let message) = $0 { "\(kind): \(message)" } else { nil } }
            throw outcome.failure(
                "\(name): no \(kind) warning within \(seconds) s" + (found.closed ? " (its control channel closed: the program ended)" : "")
                    + "; its warnings: " + (said.isEmpty ? "none" : said.suffix(5).joined(separator: "; ")), at: place)
        }
    }

    /// Every delivery to the program's observers so far, in order, once the program has sent every event it had
    /// begun: an observer that printed a line a test waited for and has not returned yet is waited for (at most
    /// `timeout`), so its delivery is in the list. One that never returns is a failure at the caller's line.
    /// - Parameters:
    ///   - timeout: How long the program has to send the events it began.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program does not send them within `timeout` (one of its observers does not return), or has no control channel.
    /// - Returns: Every delivery so far, in the order they came.
    public func deliveries(
        timeout: Duration = .seconds(20), fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> [Delivery] {
        try await catchUpEvents(
            for: "deliveries()", timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
        return recordedDeliveries
    }

    /// Every warning the program said so far (kind, message: `missing-entitlement`, `launch-argument` …), once it
    /// has sent every event it had begun, as `deliveries()` waits.
    /// - Parameters:
    ///   - timeout: How long the program has to send the events it began.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program does not send them within `timeout`, or has no control channel.
    /// - Returns: Every warning so far (its kind and message), in the order they came.
    public func warnings(
        timeout: Duration = .seconds(20), fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> [(kind: String, message: String)] {
        try await catchUpEvents(
            for: "warnings()", timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
        return recordedWarnings
    }

    /// The deliveries that have arrived, without asking for those the program began: one whose observer printed a
    /// line the test waited for may be missing.
    @available(*, deprecated, message: "use `try await deliveries()`, which first takes in every delivery the program began")
    public var deliveries: [Delivery] { recordedDeliveries }

    /// The warnings that have arrived, without asking for those the program began.
    @available(*, deprecated, message: "use `try await warnings()`, which first takes in every event the program began")
    public var warnings: [(kind: String, message: String)] { recordedWarnings }

    private var recordedDeliveries: [Delivery] {
        record.events.compactMap { if case .delivery(let delivery) = $0 { delivery } else { nil } }
    }

    private var recordedWarnings: [(kind: String, message: String)] {
        record.events.compactMap { if case .warning(let kind, let message) = $0 { (kind, message) } else { nil } }
    }

    /// Before a look at the program's events: every event it began before now is in. A line an observer prints comes
    /// on its output pipe at once, its delivery on the control channel once the observer returns; `flush-events` is
    /// answered once every observer called before it came has returned, its event sent ahead of the answer (the runner
    /// asks the same before its checks). A program that ended or is suspended is not asked: what it sent is all there is.
    func catchUpEvents(for what: String, timeout: Duration, at place: SourcePlace) async throws {
        guard hasControlChannel else { throw channelMissing(for: what, at: place) }
        guard isRunning, !record.isSuspended, !record.isChannelClosed else { return }
        switch try await exchange(.flushEvents, suite: nil, timeout: timeout, at: place).answer {
        case .answered(let response) where response.ok: return
        case .answered(let response):
            throw outcome.failure("\(name) refused flush-events before \(what): \(response.error ?? "no reason given")", at: place)
        case .closed, .unsent:
            return  // it ended: its channel was read to its end
        case .timedOut:
            throw outcome.failure(
                "\(name) did not send the events it began before \(what) within \(timeout.seconds) s: one of its observers has not "
                    + "returned" + Self.outputSummary(record), at: place)
        }
    }

    /// The first delivery not taken before that `matches`, waiting up to `timeout`.
    private func waitForDelivery(
        _ wanted: String, timeout: Duration, at place: SourcePlace,
        matching matches: @escaping @Sendable (Delivery) -> Bool
    ) async throws -> Delivery {
        guard hasControlChannel else { throw channelMissing(for: "a wait for a \(wanted)", at: place) }
        let seconds = timeout.seconds
        return try await Blocking.run { [record, outcome, name] in
            let found = record.takeEvent(timeout: seconds) { event -> Delivery? in
                if case .delivery(let delivery) = event, matches(delivery) { delivery } else { nil }
            }
            if let delivery = found.found { return delivery }
            let seen = record.events.compactMap { if case .delivery(let delivery) = $0 { delivery.description } else { nil } }.suffix(5)
            throw outcome.failure(
                "\(name): no \(wanted) within \(seconds) s"
                    + (found.closed ? " (its control channel closed: the program ended)" : "")
                    + "; its observers were told: " + (seen.isEmpty ? "nothing" : seen.joined(separator: "; "))
                    + " (only what the program observes is delivered)", at: place)
        }
    }

    private static func describe(key: String, value: Value?, mechanism: DeliveryMechanism?) -> String {
        "\(mechanism.map { "\($0.rawValue) " } ?? "")delivery of \(key)" + (value.map { " = \(PlistJSON.encode($0))" } ?? "")
    }

    private static func delivery(_ delivery: Delivery, of key: String, value: Value?, mechanism: DeliveryMechanism?) -> Bool {
        delivery.key == key && (value == nil || delivery.new == value) && (mechanism == nil || delivery.mechanism == mechanism)
    }
}
