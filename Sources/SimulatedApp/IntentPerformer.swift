import AppModel
import AppProtocol
import Foundation
import GroupDefaults
import PropertyList

/// Performs one of the app's intents with the session's defaults, as Siri or
/// Shortcuts run one action: in the intent extension's own short-lived
/// process, or in the main app's (manifest `intents: in-app`). The change is
/// committed before the process reports success.
enum IntentPerformer {
    /// Returns the key's new value.
    static func perform(_ name: String, parameters: [String: String], session: AppSession) throws -> PlistValue? {
        guard let intent = session.manifest.intents[name] else {
            let known = session.manifest.intents.keys.sorted().joined(separator: ", ")
            throw AppProtocolError.refused("unknown intent '\(name)'; this app knows: \(known.isEmpty ? "none" : known)")
        }
        for parameter in parameters.keys where parameter != intent.parameter {
            throw AppProtocolError.refused(
                "intent \(name) takes no parameter '\(parameter)'\(intent.parameter.map { " (its parameter is '\($0)')" } ?? "")")
        }
        func value() throws -> PlistValue {
            if let parameter = intent.parameter {
                guard let text = parameters[parameter] else { throw AppProtocolError.refused("intent \(name) needs \(parameter)=VALUE") }
                do { return try OldStylePropertyList.parseValueArgument(text) } catch {
                    throw AppProtocolError.refused(
                        "parameter \(parameter): the value starts like a property list but is not one (\(error)); quote it, e.g. \(parameter)='(a, b)'"
                    )
                }
            }
            return intent.value!
        }
        let store = session.store
        // The session's operations, not `session.perform` with its response
        // dropped: see `AppSession.clearSuite` for the compiler crash that caused.
        switch intent.action {
        case .set: store.set(try value(), forKey: intent.key)
        case .remove: store.removeObject(forKey: intent.key)
        case .append: try session.append([value()], to: intent.key)
        case .increment: try store.increment(intent.key, by: intent.by)
        case .toggle:
            try store.transaction { contents in contents[intent.key] = .bool(!(Conversions.bool(contents[intent.key]) ?? false)) }
        }
        try store.flush()
        // What the intent stored, not what an argument override may show.
        return try store.persistentDomain(forName: store.domainName)?[intent.key]
    }
}
