import AppProtocol
import DeviceState
import Foundation
import SimulatedAppIntents
import SimulatedFoundation

/// A type that advises WidgetKit when to update a user-configurable widget's
/// display: a `TimelineProvider` whose calls are async and receive the
/// widget's `WidgetConfigurationIntent`, its `@Parameter`s set to what the
/// person chose. `GroupSim.runWidget(kind:family:provider:configuration:intents:)`
/// runs it. Apple: https://developer.apple.com/documentation/widgetkit/appintenttimelineprovider
public protocol AppIntentTimelineProvider {
    associatedtype Entry: TimelineEntry
    associatedtype Intent: WidgetConfigurationIntent
    typealias Context = TimelineProviderContext

    /// An entry with sample data, shown while the widget has nothing else.
    /// - Parameter context: The widget's family and whether it is a preview.
    /// - Returns: The entry.
    func placeholder(in context: Context) -> Entry
    /// One entry of the widget's current state for this configuration (the widget gallery's; the host's `snapshot` command).
    /// - Parameters:
    ///   - configuration: The widget's configuration intent, its parameters set.
    ///   - context: The widget's family and whether it is a preview.
    /// - Returns: The entry.
    func snapshot(for configuration: Intent, in context: Context) async -> Entry
    /// The entries for now and later for this configuration, and when to ask again.
    /// - Parameters:
    ///   - configuration: The widget's configuration intent, its parameters set.
    ///   - context: The widget's family and whether it is a preview.
    /// - Returns: The timeline.
    func timeline(for configuration: Intent, in context: Context) async -> Timeline<Entry>
    /// Preconfigured intents, for where a person cannot edit the widget (watchOS). Carried, never asked here.
    /// - Returns: The recommendations.
    func recommendations() -> [AppIntentRecommendation<Intent>]
}

extension AppIntentTimelineProvider {
    /// None, as Apple's default for the platforms where a person edits the widget.
    /// - Returns: An empty array.
    public func recommendations() -> [AppIntentRecommendation<Intent>] { [] }
}

/// A preconfigured intent and its description.
/// Apple: https://developer.apple.com/documentation/widgetkit/appintentrecommendation
public struct AppIntentRecommendation<Intent: WidgetConfigurationIntent>: Sendable {
    public let intent: Intent
    public let description: LocalizedStringResource

    /// - Parameters:
    ///   - intent: The configuration intent, its parameters set.
    ///   - description: What the configuration is called.
    public init(intent: Intent, description: LocalizedStringResource) {
        self.intent = intent
        self.description = description
    }
}

extension TimelineSource {
    /// An `AppIntentTimelineProvider` given `configuration` at every call, each call on a task of its own (its `async`
    /// functions may suspend; the host bounds the wait).
    package static func appIntentProvider<Provider: AppIntentTimelineProvider>(
        _ provider: Provider, configuration: Provider.Intent, given: [String: String]
    ) -> TimelineSource {
        let box = AppIntentProviderBox(provider, configuration)
        let intent = String(describing: Provider.Intent.self)
        let values = IntentCatalog.values(of: configuration).joined(separator: ", ")
        var source = TimelineSource(
            providerName: String(describing: Provider.self),
            timeline: { context, reply in
                Task {
                    let timeline = await box.provider.timeline(for: box.configuration, in: context)
                    reply(ShownTimeline(entries: timeline.entries.map(ShownEntry.init), policy: timeline.policy))
                }
            },
            snapshot: { context, reply in
                Task { reply(ShownEntry(await box.provider.snapshot(for: box.configuration, in: context))) }
            },
            placeholder: { context in ShownEntry(box.provider.placeholder(in: context)) })
        source.unanswered = "return from timeline(for:in:)"
        source.configuration = GivenConfiguration(intent: intent, parameters: given, described: "\(intent)(\(values))")
        return source
    }
}

/// The user's provider and its configuration, which need not be Sendable: the provider's functions only read them.
private final class AppIntentProviderBox<Provider: AppIntentTimelineProvider>: @unchecked Sendable {
    let provider: Provider
    let configuration: Provider.Intent
    init(_ provider: Provider, _ configuration: Provider.Intent) {
        self.provider = provider
        self.configuration = configuration
    }
}

extension GroupSim {
    /// Runs a configurable widget's `provider` as the widget `kind`'s process,
    /// as WidgetKit runs an `AppIntentConfiguration(kind:intent:provider:)`:
    /// everything `runWidget(kind:family:provider:intents:)` does, with the
    /// provider's `Intent` made with `init()` and its `@Parameter`s set from
    /// `configuration` (`NAME: VALUE`, as `perform-intent` takes them); by
    /// default from the command line's `NAME=VALUE` words (launch arguments
    /// and words without `=`, a subcommand, are left out), so a scenario's
    /// `exec:` list or a test's arguments configure the widget as a person
    /// editing it would. A parameter left out takes its `default:` (nil when
    /// optional); a required one missing, one the intent does not declare, or
    /// a value not of its type ends the process with status 2 before it is
    /// ready, saying which parameter (an `error` event and a line on stderr).
    /// The same intent is given to every call for the process's life.
    /// - Parameters:
    ///   - kind: The widget's kind, as the app's `reloadTimelines(ofKind:)` names it.
    ///   - family: The family it is shown in.
    ///   - provider: The timeline provider.
    ///   - configuration: The intent's parameters by name; nil takes them from the command line's `NAME=VALUE` words.
    ///   - intents: The widget's interactive intents, run in this process.
    public static func runWidget<Provider: AppIntentTimelineProvider>(
        kind: String, family: WidgetFamily = .systemSmall, provider: Provider, configuration: [String: String]? = nil,
        intents: [any AppIntent.Type] = []
    ) -> Never {
        let intent = String(describing: Provider.Intent.self)
        let given: [String: String]
        let made: Provider.Intent
        do {
            given = try configuration ?? IntentInvocation.assignments(in: Array(CommandLine.arguments.dropFirst()))
            made =
                try IntentCatalog([Provider.Intent.self], timeLimit: AppIntentRun.timeLimitSeconds).prepare(intent, parameters: given)
                as! Provider.Intent
        } catch {
            let message =
                "the \(kind) widget's configuration cannot be made: \(error); give \(intent)'s parameters as NAME=VALUE words on the "
                + "widget's command line (a scenario's exec: list, a test's arguments), or as runWidget's configuration:"
            ControlRequestHandlers.emit(.error(message: message))
            FileHandle.standardError.write(Data("groupsim: \(message)\n".utf8))
            exit(AppIntentRun.Status.invalid)
        }
        runWidget(kind: kind, family: family, source: .appIntentProvider(provider, configuration: made, given: given), intents: intents)
    }
}

extension WidgetInfo {
    /// The configuration intent of a configurable widget running on the device, its parameters as that widget was
    /// given them; nil for a static widget, or one whose intent is of another type.
    /// Apple: https://developer.apple.com/documentation/widgetkit/widgetinfo/widgetconfigurationintent(of:)
    /// - Parameter type: The configuration intent's type.
    /// - Returns: The intent, or nil.
    public func widgetConfigurationIntent<Intent: WidgetConfigurationIntent>(of type: Intent.Type = Intent.self) -> Intent? {
        let name = String(describing: Intent.self)
        guard let configuration, configuration.intent == name else { return nil }
        return try? IntentCatalog([Intent.self], timeLimit: AppIntentRun.timeLimitSeconds).prepare(name, parameters: configuration.parameters)
            as? Intent
    }
}
