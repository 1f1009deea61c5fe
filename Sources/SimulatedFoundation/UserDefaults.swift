import AppProtocol
import Foundation
import GroupDefaults
import Guarded
import PropertyList

/// Foundation's `UserDefaults`, member for member, over the simulation's
/// shared files: the same search list and domains as on Apple platforms
/// (`GroupDefaults` does the work), values handed out as Foundation does
/// (`NSNumber` for numbers and booleans), and changes from other processes
/// seen by key-value observers and `GroupSim.observe(_:_:_:)`.
///
/// Where Foundation raises an exception (a value that is not a property
/// list, a volatile domain set as persistent) the call changes nothing and
/// says why through `Diagnostics` (stderr by default). docs/api.md lists
/// every member and how it behaves here.
/// Unchecked Sendable, as Apple declares it: its state is the `GroupDefaults` it wraps (which locks its own) and constants; a subclass adds state at its own risk, as on Apple.
open class UserDefaults: NSObject, @unchecked Sendable {
    // MARK: Domain names and notifications

    /// The domain every app shares.
    public static let globalDomain = DomainName.global
    /// The domain of the process's `-key value` launch arguments.
    public static let argumentDomain = DomainName.argument
    /// The domain `register(defaults:)` fills.
    public static let registrationDomain = DomainName.registration

    /// Posted on the writing thread, with the instance as its object, after
    /// each call of this process that changes defaults through the instance;
    /// and, on the library's notification queue, when an administrator
    /// changes the app's managed preferences while it runs (as MDM's push
    /// does on iOS). Other changes from other processes never post it: observe
    /// them (key-value observing, `GroupSim.observe(_:_:_:)`).
    public static let didChangeNotification = Notification.Name("NSUserDefaultsDidChangeNotification")

    /// Posted on a tvOS device, with the instance as its object, when a
    /// commit of this process takes the instance's domain to 512 KiB (from
    /// below it, or first in this process), on the library's notification
    /// queue; the process ends at 1 MiB. Never on other platforms, as on Apple's.
    public static let sizeLimitExceededNotification = Notification.Name("NSUserDefaultsSizeLimitExceededNotification")

    /// The simulated defaults behind this instance (`GroupSim.groupDefaults(of:)`).
    let groupDefaults: GroupDefaults
    /// The process this instance belongs to (`GroupSim.process(of:)`).
    let simulatedProcess: SimulatedProcess
    /// Its `addObserver(_:forKeyPath:options:context:)` observers.
    let keyValueRegistrations = KeyValueRegistrations()
    /// Posts `didChangeNotification` when the managed preferences change; set once, right after init.
    private var managedChanges: DefaultsObservation?
    /// Posts `sizeLimitExceededNotification` (tvOS only); set once, right after init.
    private var sizeWarnings: DefaultsObservation?
    /// How `managedChanges` and `sizeWarnings` reach this instance: with no weak reference, which would slow every `set`.
    private var managedChangeGate: InstanceGate<UserDefaults>?

    // MARK: Creating

    private static let standardLock = Locked()
    nonisolated(unsafe) private static var standardInstance: UserDefaults?

    /// The current process's standard defaults: its bundle identifier's domain.
    open class var standard: UserDefaults {
        standardLock.withLock {
            if let standardInstance { return standardInstance }
            let made = UserDefaults()
            standardInstance = made
            return made
        }
    }

    /// Saves the standard defaults and lets them go; the next `standard` is a new instance.
    open class func resetStandardUserDefaults() {
        let released = standardLock.withLock { () -> UserDefaults? in
            defer { standardInstance = nil }
            return standardInstance
        }
        _ = released?.synchronize()
    }

    // Apple's two initializers are the designated ones, as on Apple platforms,
    // so a subclass (a test's mock) inherits them, or calls
    // `super.init(suiteName:)` from its own. The simulation's own instances,
    // of a given process, come from `GroupSim.defaults(of:)` and its siblings,
    // through the internal `init(groupDefaults:process:)`: nothing here adds a
    // name to Apple's class that an app's extension could also declare.

    /// The standard defaults' domain, in a new instance (its own search list).
    public override init() {
        let process = SimulatedProcess.current
        groupDefaults = process.openStandard()
        simulatedProcess = process
        super.init()
        forwardManagedChangesAndSizeWarnings()
    }

    /// A suite: an app group's id shares it with the group's other apps (when
    /// this process is entitled to the group). nil, as on Apple platforms,
    /// for `NSGlobalDomain` and for the app's own bundle identifier; a nil
    /// name gives the standard domain.
    /// - Parameter suiteName: The suite's domain name, or nil.
    public required init?(suiteName: String?) {
        let process = SimulatedProcess.current
        guard let store = process.open(suiteNameOrStandard: suiteName) else { return nil }
        groupDefaults = store
        simulatedProcess = process
        super.init()
        forwardManagedChangesAndSizeWarnings()
    }

    /// An instance over defaults opened elsewhere, for `process`.
    init(groupDefaults: GroupDefaults, process: SimulatedProcess) {
        self.groupDefaults = groupDefaults
        self.simulatedProcess = process
        super.init()
        forwardManagedChangesAndSizeWarnings()
    }

    /// Posts `didChangeNotification` for an administrator's change and
    /// `sizeLimitExceededNotification` for a commit over the limit; called once, by each initializer.
    private func forwardManagedChangesAndSizeWarnings() {
        let gate = InstanceGate(self)
        managedChangeGate = gate
        managedChanges = groupDefaults.onManagedChange { gate.instance()?.postDidChange(origin: .otherProcess) }
        sizeWarnings = groupDefaults.onSizeLimitWarning {
            guard let instance = gate.instance() else { return }
            NotificationCenter.default.post(name: Self.sizeLimitExceededNotification, object: instance)
        }
    }

    deinit { managedChangeGate?.close() }

    // MARK: Reading

    /// The effective value (numbers and booleans as `NSNumber`), or nil when no domain has the key.
    /// - Parameter defaultName: The key.
    /// - Returns: The value of the first domain in the search list that has the key.
    open func object(forKey defaultName: String) -> Any? {
        KeyReads.note(defaultName)
        return groupDefaults.value(forKey: defaultName).map(FoundationBridge.object)
    }

    /// A string, or a number's text (a `Float`'s as a `Float` prints: "12.34").
    /// - Parameter defaultName: The key.
    /// - Returns: The text, or nil for any other value.
    open func string(forKey defaultName: String) -> String? {
        KeyReads.note(defaultName)
        return FoundationBridge.string(groupDefaults.value(forKey: defaultName))
    }

    /// nil unless the value is an array.
    /// - Parameter defaultName: The key.
    /// - Returns: The array, its elements in Foundation's types.
    open func array(forKey defaultName: String) -> [Any]? {
        KeyReads.note(defaultName)
        return groupDefaults.array(forKey: defaultName).map { $0.map(FoundationBridge.object) }
    }

    /// nil unless the value is a dictionary.
    /// - Parameter defaultName: The key.
    /// - Returns: The dictionary, its values in Foundation's types.
    open func dictionary(forKey defaultName: String) -> [String: Any]? {
        KeyReads.note(defaultName)
        return groupDefaults.dictionary(forKey: defaultName).map(FoundationBridge.dictionary)
    }

    /// nil unless the value is data.
    /// - Parameter defaultName: The key.
    /// - Returns: The data.
    open func data(forKey defaultName: String) -> Data? {
        KeyReads.note(defaultName)
        return groupDefaults.data(forKey: defaultName)
    }

    /// nil unless the value is an array of strings only.
    /// - Parameter defaultName: The key.
    /// - Returns: The strings, or nil.
    open func stringArray(forKey defaultName: String) -> [String]? {
        KeyReads.note(defaultName)
        return groupDefaults.stringArray(forKey: defaultName)
    }

    /// 0 when absent; numbers, booleans and numeric strings convert (docs/api.md has the table).
    /// - Parameter defaultName: The key.
    /// - Returns: The value as an integer.
    open func integer(forKey defaultName: String) -> Int {
        KeyReads.note(defaultName)
        return groupDefaults.integer(forKey: defaultName)
    }

    /// 0 when absent; numbers, booleans and numeric strings convert.
    /// - Parameter defaultName: The key.
    /// - Returns: The value as a `Float`.
    open func float(forKey defaultName: String) -> Float {
        KeyReads.note(defaultName)
        return groupDefaults.float(forKey: defaultName)
    }

    /// 0 when absent; numbers, booleans and numeric strings convert.
    /// - Parameter defaultName: The key.
    /// - Returns: The value as a `Double`.
    open func double(forKey defaultName: String) -> Double {
        KeyReads.note(defaultName)
        return groupDefaults.double(forKey: defaultName)
    }

    /// false when absent (`object(forKey:)` tells "absent" from "false");
    /// "YES", "true" and non-zero numbers are true.
    /// - Parameter defaultName: The key.
    /// - Returns: The value as a Boolean.
    open func bool(forKey defaultName: String) -> Bool {
        KeyReads.note(defaultName)
        return groupDefaults.bool(forKey: defaultName)
    }

    /// A URL stored by `set(_:forKey:)` with a URL, or a path or URL string.
    /// - Parameter defaultName: The key.
    /// - Returns: The URL, or nil.
    open func url(forKey defaultName: String) -> URL? {
        KeyReads.note(defaultName)
        return groupDefaults.url(forKey: defaultName)
    }

    /// Every effective key and value, higher domains over lower ones.
    /// - Returns: One dictionary of every domain in the search list.
    open func dictionaryRepresentation() -> [String: Any] {
        groupDefaults.representation(FoundationBridge.dictionary)
    }

    /// Whether an administrator forced the key for this app (its managed
    /// preferences hold it): a `set` of it is kept but never read back.
    /// - Parameter key: The key.
    /// - Returns: true when the app's managed preferences hold the key.
    open func objectIsForced(forKey key: String) -> Bool { groupDefaults.isForced(key) }

    /// Whether the managed preferences of `domain` on this device force the key.
    /// - Parameters:
    ///   - key: The key.
    ///   - domain: The domain whose managed preferences are asked.
    /// - Returns: true when they hold the key.
    open func objectIsForced(forKey key: String, inDomain domain: String) -> Bool { groupDefaults.isForced(key, inDomain: domain) }

    // MARK: Writing

    /// Sets the key in this instance's own domain; nil removes it. A value
    /// that is not a property list (Foundation raises here) changes nothing
    /// and is reported through `Diagnostics`.
    /// - Parameters:
    ///   - value: A property list (string, number, Boolean, date, data, or arrays and dictionaries of these); nil removes the key.
    ///   - defaultName: The key.
    open func set(_ value: Any?, forKey defaultName: String) {
        guard let value else { return removeObject(forKey: defaultName) }
        guard let stored = FoundationBridge.propertyList(value, call: "set(_:forKey: \(DefaultsError.show(defaultName)))", path: defaultName) else {
            return
        }
        write(stored, forKey: defaultName)
    }

    /// Stores an integer.
    /// - Parameters:
    ///   - value: The value.
    ///   - defaultName: The key.
    open func set(_ value: Int, forKey defaultName: String) { write(.integer(Int64(value)), forKey: defaultName) }
    /// Stores a `Float` (as a real).
    /// - Parameters:
    ///   - value: The value.
    ///   - defaultName: The key.
    open func set(_ value: Float, forKey defaultName: String) { write(.real(Double(value)), forKey: defaultName) }
    /// Stores a `Double`.
    /// - Parameters:
    ///   - value: The value.
    ///   - defaultName: The key.
    open func set(_ value: Double, forKey defaultName: String) { write(.real(value), forKey: defaultName) }
    /// Stores a Boolean.
    /// - Parameters:
    ///   - value: The value.
    ///   - defaultName: The key.
    open func set(_ value: Bool, forKey defaultName: String) { write(.bool(value), forKey: defaultName) }

    /// A file URL is stored as its path (`~` for the home folder), any other
    /// URL whole as keyed-archive data, as Apple stores them; nil removes the key.
    /// - Parameters:
    ///   - url: The URL; nil removes the key.
    ///   - defaultName: The key.
    open func set(_ url: URL?, forKey defaultName: String) {
        groupDefaults.set(url: url, forKey: defaultName, postingDidChange: false)
        postDidChange(key: defaultName)
    }

    /// Removing a key that a lower domain also holds makes the lower value visible.
    /// - Parameter defaultName: The key.
    open func removeObject(forKey defaultName: String) {
        groupDefaults.set(nil, forKey: defaultName, postingDidChange: false)
        postDidChange(key: defaultName)
    }

    /// Key-value coding's spelling of `set(_:forKey:)`, as `UserDefaults` answers it on Apple platforms.
    /// - Parameters:
    ///   - value: A property list; nil removes the key.
    ///   - key: The key.
    open func setValue(_ value: Any?, forKey key: String) { set(value, forKey: key) }

    /// Key-value coding's spelling of `object(forKey:)`.
    /// - Parameter key: The key.
    /// - Returns: The effective value, or nil.
    open func value(forKey key: String) -> Any? { object(forKey: key) }

    /// Posts this face's notification only: a second, `GroupDefaults`' own,
    /// would double the cost of a set that nobody observes.
    func write(_ value: PlistValue, forKey key: String) {
        groupDefaults.set(value, forKey: key, postingDidChange: false)
        postDidChange(key: key)
    }

    /// Registers defaults for this process only (every instance of it sees
    /// them; no other process does). Calls combine, later values win. If any
    /// value is not a property list, nothing is registered (reported).
    /// - Parameter registrationDictionary: Keys and their default values.
    open func register(defaults registrationDictionary: [String: Any]) {
        guard let values = FoundationBridge.propertyLists(registrationDictionary, call: "register(defaults:)") else { return }
        groupDefaults.register(defaults: values)
        postDidChange()
    }

    /// Waits until every change made before it is on disk, where other
    /// processes read it; false (reported) if it could not be saved.
    /// - Returns: false when the changes could not be saved.
    @discardableResult
    open func synchronize() -> Bool { groupDefaults.synchronize() }

    // MARK: Suites

    /// Adds a suite just below this instance's own domain: the suite added
    /// last is searched first. The app's own bundle id and `NSGlobalDomain`
    /// are refused (reported).
    /// - Parameter suiteName: The suite's domain name.
    open func addSuite(named suiteName: String) {
        do { try groupDefaults.addSuite(named: suiteName) } catch {
            FoundationBridge.refuse("addSuite(named: \(DefaultsError.show(suiteName)))", because: "\(error)")
        }
    }

    /// Removes a suite that `addSuite(named:)` added; a name not in the search list changes nothing.
    /// - Parameter suiteName: The suite's domain name.
    open func removeSuite(named suiteName: String) { groupDefaults.removeSuite(named: suiteName) }

    // MARK: Domains

    /// A persistent domain's keys and values; nil when it does not exist (or is volatile).
    /// - Parameter domainName: The domain's name.
    /// - Returns: The keys and values, or nil.
    open func persistentDomain(forName domainName: String) -> [String: Any]? {
        do {
            return try groupDefaults.persistentDomain(forName: domainName).map(FoundationBridge.dictionary)
        } catch {
            Diagnostics.report(
                Diagnostic(kind: .reloadFailed, message: "persistentDomain(forName: \(DefaultsError.show(domainName))) is nil: \(error)"))
            return nil
        }
    }

    /// Replaces a persistent domain. The argument and registration domains are refused (reported).
    /// - Parameters:
    ///   - domain: The domain's new keys and values; nothing changes if one is not a property list (reported).
    ///   - domainName: The domain's name.
    open func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        let call = "setPersistentDomain(_:forName: \(DefaultsError.show(domainName)))"
        guard let values = FoundationBridge.propertyLists(domain, call: call) else { return }
        do { try groupDefaults.setPersistentDomain(values, forName: domainName) } catch {
            return FoundationBridge.refuse(call, because: "\(error)")
        }
        postDidChange()
    }

    /// Removes every key of a persistent domain (it then does not exist).
    /// - Parameter domainName: The domain's name.
    open func removePersistentDomain(forName domainName: String) {
        do { try groupDefaults.removePersistentDomain(forName: domainName) } catch {
            return FoundationBridge.refuse("removePersistentDomain(forName: \(DefaultsError.show(domainName)))", because: "\(error)")
        }
        postDidChange()
    }

    open var volatileDomainNames: [String] { groupDefaults.volatileDomainNames }

    /// A volatile domain's keys and values in this process; empty when there is none by that name.
    /// - Parameter domainName: The domain's name.
    /// - Returns: Its keys and values.
    open func volatileDomain(forName domainName: String) -> [String: Any] {
        FoundationBridge.dictionary(groupDefaults.volatileDomain(forName: domainName))
    }

    /// Sets a volatile domain of this process. The argument, registration and
    /// languages domains are refused (reported).
    /// - Parameters:
    ///   - domain: The domain's keys and values; nothing changes if one is not a property list (reported).
    ///   - domainName: The domain's name.
    open func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        let call = "setVolatileDomain(_:forName: \(DefaultsError.show(domainName)))"
        guard let values = FoundationBridge.propertyLists(domain, call: call) else { return }
        do { try groupDefaults.setVolatileDomain(values, forName: domainName) } catch {
            return FoundationBridge.refuse(call, because: "\(error)")
        }
        postDidChange()
    }

    /// Removes a volatile domain of this process; an unknown name changes nothing.
    /// - Parameter domainName: The domain's name.
    open func removeVolatileDomain(forName domainName: String) {
        groupDefaults.removeVolatileDomain(forName: domainName)
        postDidChange()
    }

    /// `key`: the one key the call changed, if it changed one (what a control channel reports).
    /// `origin`: another process's only for an administrator's change of the managed preferences.
    func postDidChange(key: String? = nil, origin: ChangeOrigin = .thisProcess) {
        ControlTap.delivering(
            {
                .delivery(
                    Delivery(
                        mechanism: .didChangeNotification, key: key, old: nil, new: key.flatMap(self.groupDefaults.value(forKey:)),
                        origin: origin.rawValue, domain: origin == .thisProcess ? self.groupDefaults.domainName : DomainName.managed))
            }, from: simulatedProcess
        ) {
            // What post(name:object:) does in corelibs Foundation, without its copy of the object.
            NotificationCenter.default.post(Notification(name: Self.didChangeNotification, object: self))
            postDidChangeMessageIfObserved()
        }
    }
}
