import AppProtocol
import Foundation
import Guarded
import PropertyList

/// The intents a program runs, by name (each type's own name), and how one
/// run of one of them goes: a fresh instance (`init()`), its parameters
/// checked and set through the `@Parameter`s `Mirror` finds, `perform()`
/// bounded by the time limit, and what it returned read back.
package struct IntentCatalog: Sendable {
    let types: [String: any AppIntent.Type]
    /// How long `perform()` may take.
    let timeLimit: Double

    package init(_ intents: [any AppIntent.Type], timeLimit: Double) {
        var types: [String: any AppIntent.Type] = [:]
        for type in intents { types[String(describing: type)] = type }
        self.types = types
        self.timeLimit = timeLimit
    }

    var names: [String] { types.keys.sorted() }

    /// One run: its outcome, or why it failed (the request, the intent, or its time).
    func run(_ name: String, parameters: [String: String]) -> Result<IntentOutcome, IntentRunError> {
        let intent: any AppIntent
        do { intent = try prepare(name, parameters: parameters) } catch { return .failure(error) }
        return perform(intent, name: name)
    }

    /// A fresh intent of that name with its parameters set and checked; every problem at once, each naming its parameter.
    package func prepare(_ name: String, parameters: [String: String]) throws(IntentRunError) -> any AppIntent {
        guard let type = types[name] else {
            throw .invalid("unknown intent '\(name)'; this program offers: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
        }
        let intent = type.init()
        let declared = Self.parameters(of: intent)
        var problems: [String] = []
        let list = declared.map { "\($0.name) (\($0.parameter.valueType?.name ?? "unsupported"))" }.joined(separator: ", ")
        for given in parameters.keys.sorted() where !declared.contains(where: { $0.name == given }) {
            problems.append("\(name) has no parameter '\(given)'; " + (declared.isEmpty ? "it takes none" : "its parameters: \(list)"))
        }
        for (parameterName, parameter) in declared {
            guard let type = parameter.valueType else {
                problems.append("parameter \(parameterName) of \(name) has a type the simulation cannot fill (\(Self.typeName(of: parameter)))")
                continue
            }
            if let text = parameters[parameterName] {
                if !parameter.assign(text) {
                    problems.append("parameter \(parameterName) of \(name) is \(type.name): '\(text)' is not \(type.expected)")
                }
            } else if parameter.isRequired {
                problems.append("\(name) needs parameter \(parameterName) (\(type.name), \(type.expected)): give \(parameterName)=VALUE")
            }
        }
        guard problems.isEmpty else { throw .invalid(problems.joined(separator: "; ")) }
        return intent
    }

    /// Its `@Parameter`s by name, in declaration order (the property's name without the wrapper's underscore).
    static func parameters(of intent: any AppIntent) -> [(name: String, parameter: AnyIntentParameter)] {
        Mirror(reflecting: intent).children.compactMap { child in
            guard let label = child.label, let parameter = child.value as? AnyIntentParameter else { return nil }
            return (label.hasPrefix("_") ? String(label.dropFirst()) : label, parameter)
        }
    }

    /// Its parameters as `name=value` (a value as JSON, `nil` for none), in declaration order: how reports name a run.
    package static func values(of intent: any AppIntent) -> [String] {
        parameters(of: intent).map { "\($0.name)=\($0.parameter.reported.map(PlistJSON.encode) ?? "nil")" }
    }

    private static func typeName(of parameter: AnyIntentParameter) -> String {
        let full = String(describing: type(of: parameter))
        return full.firstIndex(of: "<").map { String(full[full.index(after: $0)...].dropLast()) } ?? full
    }

    /// Runs `perform()` on a task of its own and waits for it at most the
    /// time limit; past it the task is cancelled and left (its process is
    /// ended by whoever started it, as the system ends an extension).
    func perform(_ intent: any AppIntent, name: String) -> Result<IntentOutcome, IntentRunError> {
        let box = OutcomeBox()
        let opensApp = type(of: intent).openAppWhenRun
        let task = Task {
            do {
                let result = try await Self.performOpened(intent)
                box.finish(.success(Self.outcome(of: result, opensApp: opensApp)))
            } catch {
                box.finish(.failure(.failed("\(name) failed: \(Self.describe(error))")))
            }
        }
        guard let finished = box.wait(timeout: timeLimit) else {
            task.cancel()
            let given = Self.values(of: intent)
            return .failure(
                .timedOut(
                    "\(name)\(given.isEmpty ? "" : " (" + given.joined(separator: ", ") + ")") did not finish within \(Self.seconds(timeLimit)) s: "
                        + "the system cancels an intent that runs longer (Apple gives about 30 s); its perform() was cancelled"))
        }
        return finished
    }

    private static func performOpened<Intent: AppIntent>(_ intent: Intent) async throws -> any IntentResult { try await intent.perform() }

    private static func outcome(of result: any IntentResult, opensApp: Bool) -> IntentOutcome {
        guard let reported = result as? ReportedIntentResult else {
            return IntentOutcome(value: value(of: result).flatMap(IntentValues.report), dialog: nil, opensApp: opensApp)
        }
        return IntentOutcome(value: reported.reportedValue.flatMap(IntentValues.report), dialog: reported.reportedDialog?.text, opensApp: opensApp)
    }

    private static func value<Result: IntentResult>(of result: Result) -> Any? { result.value.map { $0 as Any } }

    /// An error as a person reads it: its description when it has one.
    static func describe(_ error: any Error) -> String {
        if let localized = error as? LocalizedError, let text = localized.errorDescription { return text }
        return "\(error)"
    }

    static func seconds(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
}

/// What a performed intent returned, as reported.
struct IntentOutcome: Sendable, Equatable {
    let value: PlistValue?
    let dialog: String?
    /// Its type's `openAppWhenRun`.
    let opensApp: Bool
}

/// Why an intent's run did not give an outcome; each ends a one-shot run with its own status.
package enum IntentRunError: Error, CustomStringConvertible {
    /// The request: no such intent, a parameter it lacks, does not take, or cannot read.
    case invalid(String)
    /// `perform()` threw.
    case failed(String)
    /// `perform()` did not return within the time limit.
    case timedOut(String)

    package var description: String {
        switch self {
        case .invalid(let message), .failed(let message), .timedOut(let message): message
        }
    }

    var status: Int32 {
        switch self {
        case .invalid: AppIntentRun.Status.invalid
        case .failed: AppIntentRun.Status.failed
        case .timedOut: AppIntentRun.Status.timedOut
        }
    }
}

/// The one outcome of a run, handed from its task to the waiting thread.
/// Unchecked Sendable: `result` is reached only through its lock.
final class OutcomeBox: @unchecked Sendable {
    private let result = LockedCondition<Result<IntentOutcome, IntentRunError>?>(nil)

    func finish(_ outcome: Result<IntentOutcome, IntentRunError>) {
        result.withLock { if $0 == nil { $0 = outcome } }
    }

    /// The outcome; nil when none came within `timeout` seconds.
    func wait(timeout: Double) -> Result<IntentOutcome, IntentRunError>? {
        result.wait(atMost: timeout) { $0 }
    }
}
