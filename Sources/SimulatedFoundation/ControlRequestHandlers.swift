import AppProtocol
import Guarded

/// Requests of the control protocol that belong to modules above this one:
/// `reload` to a widget's timeline (SimulatedWidgetKit), `reload-widgets`
/// to WidgetCenter, `perform-intent` to the program's App Intents
/// (SimulatedAppIntents). A module installs its handler when the program
/// starts that part of itself; until then `ControlSession` refuses the
/// request, saying what the program would have to run to answer it.
package enum ControlRequestHandlers {
    /// Which request a handler answers.
    package enum Request: Hashable, Sendable {
        case reloadTimeline, reloadWidgets, performIntent

        init?(_ request: AppRequest) {
            switch request {
            case .reloadTimeline: self = .reloadTimeline
            case .reloadWidgets: self = .reloadWidgets
            case .performIntent: self = .performIntent
            default: return nil
            }
        }
    }

    /// Runs on the channel's serial worker, one request at a time; it may block (the channel answers `ping` meanwhile).
    package typealias Handler = @Sendable (AppRequest) throws -> AppResponse

    private static let handlers = Locked<[Request: Handler]>([:])

    /// Answers `request` from now on (a second install replaces the first).
    package static func install(_ request: Request, _ handler: @escaping Handler) {
        handlers.withLock { $0[request] = handler }
    }

    /// Stops answering `request` (the part that answered it ended).
    package static func remove(_ request: Request) {
        _ = handlers.withLock { $0.removeValue(forKey: request) }
    }

    /// Says `event` on the program's control channel, if one serves (an intent's `intent-result`, from SimulatedAppIntents).
    package static func emit(_ event: AppEvent) {
        guard ControlTap.isServing else { return }
        ControlTap.emit(event, from: .current)
    }

    /// The handler installed for `request`, if it is one of these and one is.
    static func handler(for request: AppRequest) -> Handler? {
        guard let kind = Request(request) else { return nil }
        return handlers.withLock { $0[kind] }
    }
}
