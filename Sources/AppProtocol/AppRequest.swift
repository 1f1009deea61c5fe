import PropertyList

/// The three kinds of process an app is made of.
package enum Role: String, Sendable, CaseIterable {
    case mainApp = "main-app"
    case widget
    case intentExtension = "intent-extension"
}

/// What a person (console) or a program (control protocol) asks a simulated
/// process to do. Both faces turn their input into these.
package enum AppRequest: Sendable, Equatable {
    case get(key: String)
    /// What a typed getter returns: `bool(forKey:)`, `integer(forKey:)` …
    case typedGet(key: String, as: TypedRead)
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
    /// The iCloud key-value store (NSUbiquitousKeyValueStore) of the target's entitlement.
    case cloudGet(key: String)
    case cloudSet(key: String, value: PlistValue)
    case cloudRemove(key: String)
    case cloudDump
    /// `synchronize()`: false without an account.
    case cloudSynchronize
    /// The main app performs one of the app's intents in its own process
    /// (manifest `intents: in-app`), or a program performs one of the App
    /// Intents it offers (SimulatedAppIntents): parameters as `name=value` gives them.
    case performIntent(name: String, parameters: [String: String])
    case info
    /// The domains a read looks in, in order (`searchList` of the answering instance).
    case searchList
    /// `objectIsForced(forKey:)` of the answering instance, or `objectIsForced(forKey:inDomain:)` with a domain.
    case forced(key: String, domain: String?)
    case ping
    /// Answered once every event the program had begun before the request came (an observer called then has
    /// returned, its `delivery` queued) is queued ahead of the answer: what a driver saw before it asked is then all in.
    case flushEvents
    case exit(status: Int32)
}

/// The typed getters of UserDefaults, as the protocol names them.
package enum TypedRead: String, Sendable, CaseIterable {
    case bool, integer, double, string, url
    case stringArray = "string-array"
}

/// What a request returns.
package enum AppResponse: Sendable {
    case done
    case value(key: String, value: PlistValue?, domain: String?)
    case values([(key: String, value: PlistValue, domain: String)])
    case integer(Int64)
    case boolean(Bool)
    case info([String: PlistValue])
    case searchList([String])
    /// An App Intent performed: what `perform()` returned (its value, its dialog's text) and its `openAppWhenRun`.
    case intent(value: PlistValue?, dialog: String?, opensApp: Bool)
}
