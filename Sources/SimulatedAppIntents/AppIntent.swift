import Foundation

/// An action of the app that Siri, Shortcuts, Spotlight and widgets can
/// run: a type with a title, its `@Parameter`s and `perform()`.
///
/// ```swift
/// struct AddNoteIntent: AppIntent {
///     static var title: LocalizedStringResource = "Add Note"
///     @Parameter(title: "Text") var text: String
///     func perform() async throws -> some IntentResult & ReturnsValue<Int> & ProvidesDialog {
///         …
///         return .result(value: count, dialog: "Added. You have \(count) notes.")
///     }
/// }
/// ```
///
/// Here nothing finds intents by itself: `GroupSim.runIntents(_:)` (an
/// intent extension's main) and `GroupSim.offerIntents(_:)` (a running
/// program) name the types they run, each by its type's name.
public protocol AppIntent: Sendable {
    associatedtype PerformResult: IntentResult
    /// The name a person sees (the runner names the intent by its type instead).
    static var title: LocalizedStringResource { get }
    /// What the intent does, for Shortcuts.
    static var description: IntentDescription? { get }
    /// Deprecated by Apple for `supportedModes`: whether the system brings the
    /// app to the foreground to run the intent; an error in an app extension.
    /// Here it is reported with the result (`opensApp`); nothing comes to the foreground.
    static var openAppWhenRun: Bool { get }
    /// Whether Shortcuts and Spotlight list it.
    static var isDiscoverable: Bool { get }
    /// An intent with its parameters at their defaults; the system sets them before `perform()`.
    init()
    /// Does the intent's work with its parameters set.
    /// - Throws: What the intent's work throws; the caller gets it as the intent's error.
    /// - Returns: The result: a value, a dialog, both, or nothing.
    func perform() async throws -> PerformResult
}

extension AppIntent {
    public static var description: IntentDescription? { nil }
    public static var openAppWhenRun: Bool { false }
    public static var isDiscoverable: Bool { true }
}

/// The intent of a configurable widget: its `@Parameter`s are the widget's
/// settings, which a person edits and WidgetKit's `AppIntentTimelineProvider`
/// receives with each timeline request. SimulatedWidgetKit builds on it.
public protocol WidgetConfigurationIntent: AppIntent {}

extension WidgetConfigurationIntent {
    /// A configuration intent is read, not run: Apple gives it a `perform()` that does nothing.
    /// - Throws: Never here.
    /// - Returns: `.result()`.
    public func perform() async throws -> IntentResultContainer<Never, Never, Never, Never> { .result() }
}

/// An intent that sets a value: a widget's `Toggle(isOn:intent:)` runs one,
/// its `value` set to the toggle's new state. Here the tap is a
/// `perform-intent` with `value=true` or `value=false`.
/// Apple: https://developer.apple.com/documentation/appintents/setvalueintent
public protocol SetValueIntent: AppIntent {
    associatedtype ValueType: _IntentValue
    var value: ValueType { get set }
}
