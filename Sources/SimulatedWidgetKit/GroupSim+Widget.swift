import AppProtocol
import DeviceState
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import SimulatedAppIntents
import SimulatedFoundation
import SimulationValues

extension GroupSim {
    /// Runs `provider` as the widget `kind`'s process, as WidgetKit runs a
    /// widget extension: call it from the widget target's main, in place of
    /// `@main struct …: Widget` and its `StaticConfiguration(kind:provider:)`.
    /// It never returns: the process runs until SIGTERM, `quit` on its
    /// input, or `exit` on its control channel (docs/api.md, "The widget host").
    ///
    /// - It asks for a timeline at launch, shows each entry when the device's
    ///   clock reaches its date, and asks again as the policy says or when a
    ///   reload is asked (`WidgetCenter.shared.reloadTimelines(ofKind:)` or
    ///   `reloadAllTimelines()` from any process of the device, within the
    ///   budget; `reload` on the control channel; `reload` on its input).
    /// - An entry's date counts on the device's clock: the provider's
    ///   `Date()` plus the clock's offset when the timeline was asked for.
    /// - Each shown entry is a `render` event on the control channel (its card:
    ///   the entry's properties) and a line on stdout.
    /// - A provider that does not call its completion within 30 s
    ///   (`GROUPSIM_WIDGET_PROVIDER_TIMEOUT`), or calls it twice, is reported by
    ///   its type's name as a `widget-provider` warning; the widget goes on.
    /// - `intents`: the App Intents of the widget's buttons and toggles (iOS 17's
    ///   `Button(intent:)`, `Toggle(isOn:intent:)`), offered to `perform-intent`
    ///   (a scenario's `intent: { in: widget }`, a test's `performIntent`): one
    ///   runs in this process, as an intent whose code is only in the widget
    ///   target does, and then the widget asks its provider again (render reason
    ///   `intent`) before the request is answered.
    /// - Parameters:
    ///   - kind: The widget's kind, as the app's `reloadTimelines(ofKind:)` names it.
    ///   - family: The family it is shown in.
    ///   - provider: The timeline provider.
    ///   - intents: The widget's interactive intents, run in this process.
    public static func runWidget<Provider: TimelineProvider>(
        kind: String, family: WidgetFamily = .systemSmall, provider: Provider, intents: [any AppIntent.Type] = []
    ) -> Never {
        runWidget(kind: kind, family: family, source: .provider(provider), intents: intents)
    }

    /// The host over any source of timelines, offering the widget's interactive intents.
    package static func runWidget(kind: String, family: WidgetFamily, source: TimelineSource, intents: [any AppIntent.Type]) -> Never {
        guard !kind.isEmpty, !kind.contains(where: \.isNewline) else {
            FileHandle.standardError.write(
                Data(
                    "groupsim: GroupSim.runWidget(kind:provider:) needs the widget's kind, one line of text, as StaticConfiguration(kind:) takes it\n"
                        .utf8))
            exit(64)
        }
        let host = WidgetHost(
            kind: kind, family: family, source: source, identity: SimulatedProcess.current.identity,
            providerTimeout: WidgetHostConsole.providerTimeout(SimulationEnvironment.current.values))
        // A scenario's `reload`, a test's request: answered once the new entry is shown.
        ControlRequestHandlers.install(.reloadTimeline) { _ in
            guard host.reloadAndWait(reason: "request") else {
                throw AppProtocolError.refused(
                    "\(host.source.providerName) gave the \(host.kind) widget no timeline within \(WidgetHost.seconds(host.providerTimeout)); "
                        + "the widget keeps what it showed (a widget-provider warning says more)")
            }
            return .done
        }
        // A button's intent runs here, then WidgetKit reloads the widget at once, outside its budget (docs/apple-traps.md,
        // "Intents in the app's process"); the request is answered once the new entry shows (or the provider's time ran out).
        if !intents.isEmpty { GroupSim.offer(intents) { _ in _ = host.reloadAndWait(reason: "intent") } }
        // Set up once it listens for reloads and shows its first entry (or its provider's time ran out): only then
        // does the driver hear `ready`, so a reload asked right after `launch` is never missed.
        let firstShown = LockedCondition(false)
        host.start { _ in firstShown.withLock { $0 = true } }
        _ = firstShown.wait(atMost: host.providerTimeout + 5) { $0 }
        GroupSim.ready()
        WidgetHostConsole(host: host).readCommands()
        // End of input does not end the widget (a process started with its input closed keeps running).
        dispatchMain()
    }
}

/// The host's input, for a person at a terminal: one command a line, read on the main thread.
struct WidgetHostConsole {
    let host: WidgetHost

    static let help = """
        commands: reload (ask the provider for a new timeline), snapshot (getSnapshot, as the gallery asks), \
        placeholder (placeholder(in:)), quit
        """

    func readCommands() {
        let configured = host.source.configuration.map { " configured with \($0.described)" } ?? ""
        host.say("widget \(host.kind): running \(host.source.providerName)\(configured); \(Self.help)")
        while let line = readLine() {
            switch line.trimmingCharacters(in: .whitespaces) {
            case "": continue
            case "reload": host.reload(reason: "request")
            case "snapshot":
                host.source.snapshot(TimelineProviderContext(family: host.family, isPreview: true)) { entry in
                    host.say("widget \(host.kind) snapshot: " + Self.describe(entry))
                }
            case "placeholder":
                host.say(
                    "widget \(host.kind) placeholder: "
                        + Self.describe(host.source.placeholder(TimelineProviderContext(family: host.family, isPreview: true))))
            case "quit", "exit": exit(0)
            case let other:
                FileHandle.standardError.write(Data("groupsim: unknown command '\(other)'; \(Self.help)\n".utf8))
            }
        }
    }

    static func describe(_ entry: ShownEntry) -> String {
        entry.card.map { "\($0.key)=\($0.value.map { PlistJSON.encode($0) } ?? "nil")" }.joined(separator: " ")
    }

    /// The bound on a provider's answer: the variable's, from 0.1 to 600 seconds, else the default (said when the variable is wrong).
    static func providerTimeout(_ environment: [String: String]) -> TimeInterval {
        let variable = WidgetEnvironment.providerTimeoutVariable
        guard let text = environment[variable] else { return WidgetHost.defaultProviderTimeout }
        guard let seconds = Double(text), (0.1...600).contains(seconds) else {
            Diagnostics.report(
                Diagnostic(
                    kind: .invalidEnvironment,
                    message:
                        "\(variable)=\(text) is not a number of seconds from 0.1 to 600; the provider gets the default \(WidgetHost.seconds(WidgetHost.defaultProviderTimeout))"
                ))
            return WidgetHost.defaultProviderTimeout
        }
        return seconds
    }
}
