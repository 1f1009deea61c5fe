import Foundation
import GroupDefaults
import PropertyList

/// What a person (console) or a program (control protocol) asks a simulated
/// process to do. Both faces turn their input into these.
public enum AppCommand: Sendable, Equatable {
    case get(key: String)
    case set(key: String, value: PlistValue)
    case remove(key: String)
    /// Every effective value with the domain it comes from.
    case dump
    case register(defaults: [String: PlistValue])
    case addSuite(name: String)
    case removeSuite(name: String)
    case synchronize
    /// removePersistentDomain of the process's own suite (every key removed).
    case clear
    case increment(key: String, by: Int64)
    case append(key: String, values: [PlistValue])
    case mergeDictionary(key: String, entries: [String: PlistValue])
    /// The widget: reload its timeline now (renders).
    case reloadTimeline
    /// The app: ask WidgetCenter to reload every widget's timeline.
    case reloadWidgets
    case info
    case ping
    case exit(status: Int32)
}

/// What a command returns.
public enum AppCommandResult: Sendable {
    case done
    case value(key: String, value: PlistValue?, domain: String?)
    case values([(key: String, value: PlistValue, domain: String)])
    case integer(Int64)
    case info([String: PlistValue])
}

/// Things a simulated process tells its driver without being asked.
public enum AppEvent: Sendable {
    case ready(info: [String: PlistValue])
    /// An effective value changed (this process or another made the change).
    case change(DefaultsChange)
    /// `didChangeNotification` was posted (changes made by this process).
    case notification(name: String)
    /// The widget rendered its card.
    case render(card: [WidgetCard.Line], reason: String)
    case warning(kind: String, message: String)
    /// The intent extension performed its intent.
    case intentResult(intent: String, key: String, value: PlistValue?)
    /// Something made the process unable to go on (it exits next).
    case error(message: String)
    case exit(status: Int32)
}

/// Where events go: the JSON protocol or the console.
public protocol AppEventSink: Sendable {
    func emit(_ event: AppEvent)
}

/// A command that could not be done, said to the driver; the process keeps running.
public struct AppCommandError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
