import AppProtocol
import DeviceState
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import SimulatedFoundation

/// A widget's process, as WidgetKit runs a widget extension: it asks the
/// provider for a timeline at launch, shows each entry when the device's
/// clock reaches its date, and asks again when the policy says (`.atEnd`
/// after the last entry's date, `.after(d)` at d, `.never` only on a
/// reload) or a reload is asked (WidgetCenter's file, the control channel's
/// `reload`, a deferred reload on the budget's next day).
///
/// The clock rule: a provider computes its dates from `Date()`, the real
/// time, which nothing can intercept; an entry's date counts on the device's
/// clock by adding the clock's offset as read when the timeline was asked
/// for, so `Date()` in the provider means "the device's now".
///
/// Each shown entry is a `render` event (reason `initial`, `entry`, `policy`,
/// `request`, `reload-request`, `deferred-reload`, or `intent` after one of
/// the widget's interactive intents ran) and a line on stdout.
/// Unchecked Sendable: its state is read and changed on `queue` only.
final class WidgetHost: @unchecked Sendable {
    /// The least time on the device's clock between asking for a timeline and its policy's next ask: a
    /// policy date already past (one entry of now with `.atEnd`) must not ask in a loop. Apple gives no figure.
    static let minimumPolicyInterval: TimeInterval = 5 * 60
    /// How long a provider has to call its completion (GROUPSIM_WIDGET_PROVIDER_TIMEOUT overrides). Apple documents none.
    static let defaultProviderTimeout: TimeInterval = 30

    let kind: String
    let family: WidgetFamily
    let source: TimelineSource
    let providerTimeout: TimeInterval
    private let identity: ProcessIdentity
    private let clock: DeviceClock
    private let queue = DispatchQueue(label: "groupsim.widget.host")
    private var timer: DispatchSourceTimer?
    private var listeners: [(domain: PersistentDomain, id: Int)] = []

    /// One request for a timeline.
    private struct Ask {
        let generation: Int
        let reason: String
        /// The clock's offset when asked: what the entries' dates are moved by.
        let offset: Double
        /// The device's time when asked.
        let askedAt: Date
        var timedOut = false
    }

    /// The timeline being shown, its dates on the device's clock.
    private struct Current {
        let entries: [(date: Date, card: [CardLine])]
        /// When the policy asks again (nil: never).
        let policyDate: Date?
        var shown: Int?
    }

    private var offset: Double = 0
    private var generation = 0
    private var asking: Ask?
    private var reasons: [Int: String] = [:]
    private var replies: [Int: Int] = [:]
    private var current: Current?
    private var waiters: [@Sendable (Bool) -> Void] = []
    private var clockProblem: String?

    init(kind: String, family: WidgetFamily, source: TimelineSource, identity: ProcessIdentity, providerTimeout: TimeInterval) {
        self.kind = kind
        self.family = family
        self.source = source
        self.identity = identity
        self.providerTimeout = providerTimeout
        clock = DeviceClock(root: identity.root, device: identity.device)
    }

    // MARK: Starting

    /// Listens for reloads and the clock, says it runs, and asks for the first timeline; `shown` is told as for `reload`.
    func start(then shown: (@Sendable (Bool) -> Void)? = nil) {
        let center = WidgetCenterFile(root: identity.root, device: identity.device)
        let bundle = identity.bundleIdentifier
        let kind = kind
        do {
            let domain = try center.domain()
            let id = domain.addListener { [weak self] change in
                if let reason = WidgetCenterFile.reason(for: change, bundle: bundle, kind: kind) { self?.reload(reason: reason) }
            }
            listeners.append((domain, id))
        } catch {
            report(
                .widgetCenter, "the \(kind) widget cannot listen for WidgetCenter's reloads: \(error); it reloads only on the policy and on `reload`")
        }
        do {
            let domain = try DomainRegistry.shared.domain(named: "Clock", at: try clock.path, root: identity.root.path)
            let id = domain.addListener { [weak self] _ in self?.clockMoved() }
            listeners.append((domain, id))
        } catch {
            report(.widgetCenter, "the \(kind) widget cannot watch the device's clock: \(error); entries show at their dates on the real clock only")
        }
        do {
            try RunningWidgets(root: identity.root, device: identity.device).register(
                RunningWidgets.Entry(
                    bundle: bundle, kind: kind, family: family.name,
                    configuration: source.configuration.map { .init(intent: $0.intent, parameters: $0.parameters) }))
        } catch {
            report(.widgetCenter, "the \(kind) widget is not listed by WidgetCenter's getCurrentConfigurations: \(error)")
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.evaluate(clockMoved: false) }
        timer.resume()
        queue.sync { self.timer = timer }
        reload(reason: "initial", then: shown)
    }

    /// Asks the provider for a new timeline; `done` is told whether one was shown (false: the provider's time ran out).
    func reload(reason: String, then done: (@Sendable (Bool) -> Void)? = nil) {
        queue.async { self.ask(reason, then: done) }
    }

    /// Asks for a new timeline and waits until it is shown, or the provider's time ran out (and 5 s more): whether it was shown.
    func reloadAndWait(reason: String) -> Bool {
        let shown = LockedCondition<Bool?>(nil)
        reload(reason: reason) { result in shown.withLock { $0 = result } }
        return shown.wait(atMost: providerTimeout + 5, for: { $0 }) == true
    }

    private func clockMoved() { queue.async { self.evaluate(clockMoved: true) } }

    private func deliver(_ timeline: ShownTimeline, for generation: Int) { queue.async { self.received(timeline, for: generation) } }

    // MARK: On the queue

    private func ask(_ reason: String, then done: (@Sendable (Bool) -> Void)?) {
        readOffset()
        // The provider reads what other processes wrote before it was asked, not only what this process's watcher heard.
        DomainRegistry.shared.reloadOpenDomainsFromDisk()
        generation += 1
        let generation = generation
        asking = Ask(generation: generation, reason: reason, offset: offset, askedAt: Date().addingTimeInterval(offset))
        reasons[generation] = reason
        if let done { waiters.append(done) }
        source.timeline(TimelineProviderContext(family: family, isPreview: false)) { [weak self] timeline in
            self?.deliver(timeline, for: generation)
        }
        queue.asyncAfter(deadline: .now() + providerTimeout) { [weak self] in self?.timedOut(generation) }
    }

    private func timedOut(_ generation: Int) {
        guard var ask = asking, ask.generation == generation, !ask.timedOut else { return }
        ask.timedOut = true
        asking = ask
        report(
            .widgetProvider,
            "\(source.providerName) did not \(source.unanswered) within \(Self.seconds(providerTimeout)) "
                + "(asked for the \(kind) widget's timeline: \(ask.reason)); the widget keeps \(shownText) until it does or a reload asks again")
        finishWaiters(shown: false)
    }

    private func received(_ timeline: ShownTimeline, for generation: Int) {
        let calls = (replies[generation] ?? 0) + 1
        replies[generation] = calls
        if calls == 2 {
            report(
                .widgetProvider,
                "\(source.providerName) called getTimeline(in:completion:)'s completion more than once for one request "
                    + "(the \(kind) widget's timeline: \(reasons[generation] ?? "?")); the first timeline is kept, the others ignored")
        }
        guard calls == 1, let ask = asking, ask.generation == generation else { return }  // a later request superseded it
        asking = nil
        if ask.timedOut {
            report(
                .widgetProvider,
                "\(source.providerName) gave the \(kind) widget's timeline (\(ask.reason)) after the bound of \(Self.seconds(providerTimeout)); it is shown now"
            )
        }
        // Stable by date: entries of one date keep the provider's order, and the last of them shows.
        let entries = timeline.entries.enumerated()
            .map { (date: $0.element.date.addingTimeInterval(ask.offset), card: $0.element.card, index: $0.offset) }
            .sorted { ($0.date, $0.index) < ($1.date, $1.index) }.map { (date: $0.date, card: $0.card) }
        var policyDate: Date?
        switch timeline.policy.kind {
        case .atEnd: policyDate = entries.last?.date ?? ask.askedAt
        case .after(let date): policyDate = date.addingTimeInterval(ask.offset)
        case .never: policyDate = nil
        }
        policyDate = policyDate.map { max($0, ask.askedAt.addingTimeInterval(Self.minimumPolicyInterval)) }
        guard !entries.isEmpty else {
            report(
                .widgetProvider, "\(source.providerName) gave the \(kind) widget a timeline with no entries (\(ask.reason)); it keeps \(shownText)")
            current = Current(entries: current?.entries ?? [], policyDate: policyDate, shown: current?.shown)
            schedule()
            finishWaiters(shown: true)
            return
        }
        // The latest entry whose date has come; the first when none has (Apple asks that the first be now).
        let now = Date().addingTimeInterval(offset)
        let due = entries.lastIndex { $0.date <= now } ?? 0
        current = Current(entries: entries, policyDate: policyDate, shown: nil)
        show(due, reason: ask.reason)
        schedule()
        finishWaiters(shown: true)
    }

    /// The clock moved, or the timer fired: the entry now due is shown, and the policy asks if its date has come.
    private func evaluate(clockMoved: Bool) {
        readOffset()
        let now = Date().addingTimeInterval(offset)
        if let current, let due = current.entries.lastIndex(where: { $0.date <= now }), due > (current.shown ?? -1) {
            show(due, reason: "entry")
        }
        var asked = false
        if asking == nil, let policyDate = current?.policyDate, policyDate <= now {
            current = current.map { Current(entries: $0.entries, policyDate: nil, shown: $0.shown) }
            ask("policy", then: nil)
            asked = true
        }
        schedule()
        if clockMoved {
            let next = nextDate().map { "next at \(PlistJSON.timestamp($0))" } ?? "nothing more until a reload"
            say(
                "widget \(kind): the device's clock is at \(PlistJSON.timestamp(now)); showing \(shownText); \(asked ? "asked for a new timeline (policy)" : next)"
            )
        }
    }

    /// The earliest date something is due: the next entry, or the policy's ask.
    private func nextDate() -> Date? {
        guard let current else { return nil }
        let nextEntry = current.entries.indices.first { $0 > (current.shown ?? -1) }.map { current.entries[$0].date }
        let policy = asking == nil ? current.policyDate : nil
        return [nextEntry, policy].compactMap { $0 }.min()
    }

    private func schedule() {
        guard let timer else { return }
        guard let next = nextDate() else { return timer.schedule(deadline: .distantFuture) }
        let seconds = max(0, next.timeIntervalSince(Date().addingTimeInterval(offset)))
        timer.schedule(wallDeadline: .now() + seconds, leeway: .milliseconds(10))
    }

    private func show(_ index: Int, reason: String) {
        guard var current else { return }
        current.shown = index
        self.current = current
        let entry = current.entries[index]
        ControlEvents.emit(.render(card: entry.card, reason: reason, entry: RenderedEntry(kind: kind, date: entry.date)))
        let fields = entry.card.map { "\($0.key)=\($0.value.map { PlistJSON.encode($0) } ?? "nil")" }.joined(separator: " ")
        say("widget \(kind) (\(reason)): entry of \(PlistJSON.timestamp(entry.date)): \(fields)")
    }

    private var shownText: String {
        guard let current, let shown = current.shown else { return "nothing shown" }
        return "its entry of \(PlistJSON.timestamp(current.entries[shown].date))"
    }

    private func finishWaiters(shown: Bool) {
        let waiting = waiters
        waiters = []
        for done in waiting { done(shown) }
    }

    /// The clock's offset now; a clock file that cannot be read is said (once per problem) and the last offset kept.
    private func readOffset() {
        do {
            offset = try clock.offset()
            clockProblem = nil
        } catch {
            let problem = "\(error)"
            guard problem != clockProblem else { return }
            clockProblem = problem
            report(
                .invalidEnvironment,
                "the \(kind) widget cannot read the device's clock (\(problem)); it keeps the offset it read last, \(Self.seconds(offset))")
        }
    }

    // MARK: Saying things

    private func report(_ kind: Diagnostic.Kind, _ message: String) { Diagnostics.report(Diagnostic(kind: kind, message: message)) }

    /// A line for a person watching the terminal, written at once (stdout may be a pipe).
    func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    static func seconds(_ value: Double) -> String { String(format: "%g s", value) }

    deinit {
        timer?.cancel()
        for (domain, id) in listeners { domain.removeListener(id) }
    }
}
