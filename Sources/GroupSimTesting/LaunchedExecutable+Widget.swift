import AppProtocol
import Foundation
import PropertyList

/// What a widget showed: one `render` of a program running its provider
/// through SimulatedWidgetKit's `GroupSim.runWidget`.
public struct WidgetRender: Sendable, CustomStringConvertible {
    /// `initial`, `entry`, `policy`, `request`, `reload-request`, `deferred-reload` or `intent` (docs/protocol.md).
    public let reason: String
    /// The widget's kind (nil for a built-in widget).
    public let kind: String?
    /// The entry's date on the device's clock (nil for a built-in widget).
    public let entryDate: Date?
    /// The entry's properties by name (nil: absent).
    public let card: [String: Value?]

    public var description: String {
        "render (\(reason)): " + card.keys.sorted().map { "\($0)=\(card[$0]!.map { PlistJSON.encode($0) } ?? "nil")" }.joined(separator: " ")
    }
}

/// The waits and requests of a program that runs a widget.
extension LaunchedExecutable {
    /// Waits until the widget shows an entry (for `reason`, when given) and
    /// returns it. Renders that came before the call count too, each once.
    /// - Parameters:
    ///   - reason: Why the entry was shown (`initial`, `reload-request`, `period` …; nil: any).
    ///   - timeout: How long to wait at most.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when no such entry is shown within `timeout` or before the program ends, or the program has no control channel.
    /// - Returns: The entry shown.
    @discardableResult
    public func waitForRender(
        reason: String? = nil, timeout: Duration = .seconds(60),
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws -> WidgetRender {
        let place = SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column)
        guard hasControlChannel else { throw channelMissing(for: "waitForRender", at: place) }
        let seconds = timeout.seconds
        return try await Blocking.run { [record, outcome, name] in
            let found = record.takeEvent(timeout: seconds) { event -> WidgetRender? in
                guard case .render(let lines, let said, let entry) = event, reason == nil || said == reason else { return nil }
                var card: [String: Value?] = [:]
                for line in lines { card.updateValue(line.value, forKey: line.key) }
                return WidgetRender(reason: said, kind: entry?.kind, entryDate: entry?.date, card: card)
            }
            if let render = found.found { return render }
            let seen = record.events.compactMap { if case .render(_, let said, _) = $0 { said } else { nil } }.suffix(5)
            throw outcome.failure(
                "\(name): no render\(reason.map { " (\($0))" } ?? "") within \(seconds) s"
                    + (found.closed ? " (its control channel closed: the program ended)" : "")
                    + "; its renders: " + (seen.isEmpty ? "none" : seen.joined(separator: ", ")), at: place)
        }
    }

    /// Asks the widget to reload its timeline (`reload`); returns once the new entry is shown.
    /// - Parameters:
    ///   - timeout: How long to wait at most for the new entry.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: `Failure`, at the caller's line, when the program refuses (it runs no widget) or shows no new entry within `timeout`, or has no control channel.
    public func reloadWidget(
        timeout: Duration = .seconds(60), fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async throws {
        try await request(
            .reloadTimeline, suite: nil, timeout: timeout, at: SourcePlace(fileID: fileID, filePath: filePath, line: line, column: column))
    }
}
