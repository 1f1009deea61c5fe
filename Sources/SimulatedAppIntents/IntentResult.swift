import Foundation

/// What `perform()` returns: made with `.result()`, `.result(value:)`,
/// `.result(dialog:)` or `.result(value:dialog:)`, and declared as
/// `some IntentResult`, `some IntentResult & ReturnsValue<Int>`,
/// `some IntentResult & ProvidesDialog` or all three.
public protocol IntentResult: Sendable {
    /// The type of the value the intent returns (`Never`: none).
    associatedtype Value
    /// `IntentDialog` when the result has a dialog (`Never`: none).
    associatedtype Dialog
    var value: Value? { get }
}

/// A result that returns a value to whoever ran the intent (a shortcut's next action).
public protocol ReturnsValue<Value>: IntentResult where Value: _IntentValue {}

/// A result with a dialog that the system shows or speaks.
public protocol ProvidesDialog: IntentResult where Dialog == IntentDialog {}

/// The one kind of result the `result` functions make.
public struct IntentResultContainer<Value, OpensAppIntent, Content, Dialog>: IntentResult, @unchecked Sendable {
    // Unchecked Sendable: `value` is one of the supported value types (`_IntentValue`), all Sendable, or nil.
    public var value: Value?
    public var dialog: IntentDialog?
}

extension IntentResultContainer: ReturnsValue where Value: _IntentValue {}
extension IntentResultContainer: ProvidesDialog where Dialog == IntentDialog {}

extension IntentResult {
    /// The intent finished, with nothing to return.
    /// - Returns: A result with no value and no dialog.
    public static func result() -> Self where Self == IntentResultContainer<Never, Never, Never, Never> {
        IntentResultContainer(value: nil, dialog: nil)
    }

    /// The intent finished and returns `value`.
    /// - Parameter value: The intent's value (a string, number, Boolean, date or URL).
    /// - Returns: A result with the value.
    public static func result<Value>(value: Value) -> Self where Self == IntentResultContainer<Value, Never, Never, Never>, Value: _IntentValue {
        IntentResultContainer(value: value, dialog: nil)
    }

    /// The intent finished; the system shows or speaks `dialog`.
    /// - Parameter dialog: What the system says.
    /// - Returns: A result with the dialog.
    public static func result(dialog: IntentDialog) -> Self where Self == IntentResultContainer<Never, Never, Never, IntentDialog> {
        IntentResultContainer(value: nil, dialog: dialog)
    }

    /// The intent finished, returns `value`, and the system shows or speaks `dialog`.
    /// - Parameters:
    ///   - value: The intent's value (a string, number, Boolean, date or URL).
    ///   - dialog: What the system says.
    /// - Returns: A result with both.
    public static func result<Value>(value: Value, dialog: IntentDialog) -> Self
    where Self == IntentResultContainer<Value, Never, Never, IntentDialog>, Value: _IntentValue {
        IntentResultContainer(value: value, dialog: dialog)
    }
}

/// The text the system shows or speaks: a string literal, with interpolations.
public struct IntentDialog: Sendable, ExpressibleByStringInterpolation {
    /// The standalone message; what is reported as the dialog.
    let full: LocalizedStringResource
    /// The shorter message shown beside a visual result (not reported).
    let supporting: LocalizedStringResource?
    let systemImageName: String?

    /// A dialog that is shown and spoken the same.
    /// - Parameter resource: The text.
    public init(_ resource: LocalizedStringResource) { (full, supporting, systemImageName) = (resource, nil, nil) }
    /// A dialog with a spoken (full) and a shown (supporting) text.
    /// - Parameters:
    ///   - full: The text spoken, and shown where there is no supporting text.
    ///   - supporting: The text shown.
    public init(full: LocalizedStringResource, supporting: LocalizedStringResource) {
        (self.full, self.supporting, systemImageName) = (full, supporting, nil)
    }
    /// A dialog with a symbol.
    /// - Parameters:
    ///   - full: The text.
    ///   - systemImageName: An SF Symbol's name.
    public init(full: LocalizedStringResource, systemImageName: String) {
        (self.full, supporting, self.systemImageName) = (full, nil, systemImageName)
    }
    /// A dialog with both texts and a symbol.
    /// - Parameters:
    ///   - full: The text spoken, and shown where there is no supporting text.
    ///   - supporting: The text shown.
    ///   - systemImageName: An SF Symbol's name.
    public init(full: LocalizedStringResource, supporting: LocalizedStringResource, systemImageName: String) {
        (self.full, self.supporting, self.systemImageName) = (full, supporting, systemImageName)
    }
    public init(stringLiteral value: String) { self.init(LocalizedStringResource(value)) }
    public init(stringInterpolation: DefaultStringInterpolation) { self.init(LocalizedStringResource(stringInterpolation: stringInterpolation)) }

    /// The text reported for it: the full message.
    var text: String { full.key }
}

/// What the runner reads of a result, whatever its type.
protocol ReportedIntentResult {
    var reportedValue: Any? { get }
    var reportedDialog: IntentDialog? { get }
}

extension IntentResultContainer: ReportedIntentResult {
    var reportedValue: Any? { value.map { $0 as Any } }
    var reportedDialog: IntentDialog? { dialog }
}
