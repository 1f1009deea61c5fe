import AppProtocol
import Foundation
import GroupDefaults
import Guarded
import Synchronization

// Key-value observing of `UserDefaults` in the shapes Swift on Linux can
// compile. Foundation on Linux has no key-value observing at all (no
// Objective-C runtime): none of these types, and no `observeValue` on
// `NSObject` to override. They are declared here with Apple's names and
// values, over `GroupSim.observe(_:_:_:)`'s deliveries, so the same changes arrive at
// the same moments (this process's on the writing thread before the call
// returns, another process's on the library's notification queue).

/// What a change notification includes (Apple's values).
public struct NSKeyValueObservingOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The value after the change, under `newKey`.
    public static let new = NSKeyValueObservingOptions(rawValue: 0x01)
    /// The value before the change, under `oldKey`.
    public static let old = NSKeyValueObservingOptions(rawValue: 0x02)
    /// One notification at once, while the observer is added.
    public static let initial = NSKeyValueObservingOptions(rawValue: 0x04)
    /// One notification just before each change's (see docs/api.md for its timing here).
    public static let prior = NSKeyValueObservingOptions(rawValue: 0x08)
}

/// The kind of a change; a `UserDefaults` key only ever changes by `setting`.
public enum NSKeyValueChange: UInt, Sendable {
    case setting = 1
    case insertion = 2
    case removal = 3
    case replacement = 4
}

/// The keys of a change dictionary (Apple's strings).
public struct NSKeyValueChangeKey: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A key by its string.
    /// - Parameter rawValue: The key's string.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let kindKey = NSKeyValueChangeKey("kind")
    public static let newKey = NSKeyValueChangeKey("new")
    public static let oldKey = NSKeyValueChangeKey("old")
    public static let indexesKey = NSKeyValueChangeKey("indexes")
    public static let notificationIsPriorKey = NSKeyValueChangeKey("notificationIsPrior")
}

/// Foundation's `NSObject`, with key-value observing's receiving end, which
/// Foundation on Linux lacks: `observeValue(forKeyPath:of:change:context:)`
/// to override. In a file that imports SimulatedFoundation, `NSObject` is
/// this class (a subclass of Foundation's), so an Apple observer class,
/// `class Observer: NSObject { override func observeValue(…) }`, compiles
/// unchanged. Foundation's own classes (NSNumber, NSString …) are not of
/// it: test for them with `Foundation.NSObject`.
open class NSObject: Foundation.NSObject {
    /// Told of each change of a key path this object observes
    /// (`UserDefaults.addObserver(_:forKeyPath:options:context:)`).
    /// Apple's NSObject raises if a subclass does not override it; here it
    /// is reported, and the change is dropped.
    /// - Parameters:
    ///   - keyPath: The observed key.
    ///   - object: The `UserDefaults` instance that changed.
    ///   - change: The change's kind and values, by the `options` it was added with.
    ///   - context: The context it was added with.
    open func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {
        Diagnostics.report(
            Diagnostic(
                kind: .callRefused,
                message: "\(type(of: self)) observes '\(keyPath ?? "")' but does not override observeValue(forKeyPath:of:change:context:): "
                    + "the change was dropped (Apple platforms raise an exception here)"))
    }
}

/// One change, as `observe(_:options:changeHandler:)` with a key path hands it over.
public struct NSKeyValueObservedChange<Value> {
    public typealias Kind = NSKeyValueChange
    public let kind: Kind
    /// The property's value after the change; with `.new` only.
    public let newValue: Value?
    /// The property's value before the change; with `.old` only.
    public let oldValue: Value?
    /// Always nil: a defaults key is never an indexed collection.
    public let indexes: IndexSet?
    /// Whether this is the `.prior` notification, before the change's own.
    public let isPrior: Bool
}

/// Keeps a key-path observation: `invalidate()` (or releasing it) stops delivery.
/// It keeps the observed instance alive while it is kept, as `GroupSim.Observation` does.
/// Unchecked Sendable (NSObject hides it from the checker): its one state, the observations, is in a `Locked`.
public final class NSKeyValueObservation: NSObject, @unchecked Sendable {
    private let observations: Locked<[GroupSim.Observation]>

    init(_ observations: [GroupSim.Observation]) {
        self.observations = Locked(observations)
    }

    /// Stops the observation; calling it again does nothing (as Apple's, which also runs at deinit).
    public func invalidate() {
        let ended = observations.withLock { list in
            defer { list = [] }
            return list
        }
        for observation in ended { observation.invalidate() }
    }

    deinit { invalidate() }
}

// MARK: Observers added with addObserver(_:forKeyPath:options:context:)

/// One `addObserver` call: the observer (weakly, as Apple keeps it) and what it asked for.
/// Unchecked Sendable: the observation slot is a `Locked`, the rest constants (a weak reference, which Swift reads atomically, the observer's identity, and the context pointer, only handed back).
final class KeyValueRegistration: @unchecked Sendable {
    weak var observer: NSObject?
    /// The observer's identity, taken when it registered: inside the
    /// observer's `deinit` (where Apple's KVO guide has it remove itself) the
    /// weak reference already reads nil, and this still names it.
    let observerIdentity: ObjectIdentifier
    let keyPath: String
    let options: NSKeyValueObservingOptions
    let context: UnsafeMutableRawPointer?
    /// Set right after the registration is made; taken when it ends.
    private let observation = Locked<GroupSim.Observation?>(nil)

    init(observer: NSObject, keyPath: String, options: NSKeyValueObservingOptions, context: UnsafeMutableRawPointer?) {
        self.observer = observer
        observerIdentity = ObjectIdentifier(observer)
        self.keyPath = keyPath
        self.options = options
        self.context = context
    }

    /// Whether this is a registration of `candidate`: the object it
    /// registered, alive, or the same object during its `deinit`. A
    /// registration whose observer is gone is no later object's, even one
    /// made at the same address (that one is alive: `isDeinitializing` false).
    func isRegistration(of candidate: NSObject, isDeinitializing: Bool) -> Bool {
        guard observerIdentity == ObjectIdentifier(candidate) else { return false }
        if let observer { return observer === candidate }
        return isDeinitializing
    }

    func hold(_ observation: GroupSim.Observation) { self.observation.withLock { $0 = observation } }

    /// Stops delivery (and lets the instance go, if nothing else keeps it).
    func end() {
        let ended = observation.withLock { slot in
            defer { slot = nil }
            return slot
        }
        ended?.invalidate()
    }

    /// The change dictionary, as Apple's KVO fills it for a defaults key: NSNull for an absent value.
    func change(old: Any?, new: Any?, isPrior: Bool) -> [NSKeyValueChangeKey: Any] {
        var change: [NSKeyValueChangeKey: Any] = [.kindKey: NSNumber(value: NSKeyValueChange.setting.rawValue)]
        if isPrior { change[.notificationIsPriorKey] = NSNumber(value: true) }
        if options.contains(.new), !isPrior { change[.newKey] = new ?? NSNull() }
        if options.contains(.old) { change[.oldKey] = old ?? NSNull() }
        return change
    }

    /// The `.initial` notification's dictionary. NSKeyValueObserving.h: "the
    /// notification sent as a result of NSKeyValueObservingOptionInitial will
    /// never contain an NSKeyValueChangeOldKey entry", `.old` asked or not.
    func initialChange(new: Any?) -> [NSKeyValueChangeKey: Any] {
        var change: [NSKeyValueChangeKey: Any] = [.kindKey: NSNumber(value: NSKeyValueChange.setting.rawValue)]
        if options.contains(.new) { change[.newKey] = new ?? NSNull() }
        return change
    }
}

/// Whether `object` is being deinitialized: a weak reference made to an
/// object in its `deinit` reads nil at once, as one made before does.
func isDeinitializing(_ object: AnyObject) -> Bool {
    weak let probe = object
    return probe == nil
}

/// An instance's `addObserver` registrations. A registration keeps its
/// instance alive (through its observation) until it is removed or its
/// observer is gone, so observing through a temporary instance works as on Apple.
/// Unchecked Sendable: the registrations are read and changed under `lock`.
final class KeyValueRegistrations: @unchecked Sendable {
    private let lock = Locked()
    private var registrations: [KeyValueRegistration] = []

    func add(_ registration: KeyValueRegistration) { lock.withLock { registrations.append(registration) } }

    /// Removes the latest registration matching, if any (Apple removes the latest added).
    func remove(where matches: (KeyValueRegistration) -> Bool) -> KeyValueRegistration? {
        lock.withLock {
            guard let index = registrations.lastIndex(where: matches) else { return nil }
            return registrations.remove(at: index)
        }
    }
}

extension KeyValueObservingPath {
    /// The value the path reaches from the key's value as `object(forKey:)` gives it.
    func value(from keyValue: Any?) -> Any? {
        var current = keyValue
        for part in inside {
            guard let dictionary = current as? [String: Any] else { return nil }
            current = dictionary[part]
        }
        return current
    }
}

extension UserDefaults {
    /// Tells `observer` of every change of `keyPath` by
    /// `observeValue(forKeyPath:of:change:context:)`, from this process or
    /// another, at the moments `GroupSim.observe(_:_:_:)` delivers. As Apple's KVO does,
    /// a dotted path observes the key before the first dot and reads the rest
    /// inside its value (`KeyValueObservingPath`), so a key whose name has a dot is
    /// never delivered; that is reported when the observer is added.
    /// `.initial` calls it before this returns, with no old value. The
    /// observer is not kept alive; when it is gone, its registration goes at
    /// the next change, or at once if it removes itself in its `deinit`.
    /// - Parameters:
    ///   - observer: Receives `observeValue(forKeyPath:of:change:context:)`.
    ///   - keyPath: The key (a dotted path reads into dictionaries).
    ///   - options: Which values the change dictionary carries, and `.initial`.
    ///   - context: Handed back with each change, to tell registrations apart.
    public func addObserver(
        _ observer: NSObject, forKeyPath keyPath: String, options: NSKeyValueObservingOptions = [], context: UnsafeMutableRawPointer?
    ) {
        let path = KeyValueObservingPath(keyPath)
        if let warning = path.neverDeliveredWarning(observing: "addObserver(_:forKeyPath: \"\(keyPath)\")", keyPath: keyPath) {
            Diagnostics.report(Diagnostic(kind: .keyPathNeverObserved, message: warning))
        }
        let registration = KeyValueRegistration(observer: observer, keyPath: keyPath, options: options, context: context)
        keyValueRegistrations.add(registration)
        if options.contains(.initial) {
            observer.observeValue(
                forKeyPath: keyPath, of: self,
                change: registration.initialChange(new: path.key.flatMap { path.value(from: object(forKey: $0)) }),
                context: context)
        }
        // A collection operator names no key: registered (so removeObserver finds it), never told.
        guard let key = path.key else { return }
        registration.hold(
            GroupSim.observe(self, key, reportingAs: nil) { [weak self, weak registration] change in
                guard let self, let registration else { return }
                guard let observer = registration.observer else {
                    // The observer is gone (Apple no longer needs it removed): so is its registration.
                    _ = self.keyValueRegistrations.remove { $0 === registration }
                    registration.end()
                    return
                }
                let (old, new) = (path.value(from: change.oldValue), path.value(from: change.newValue))
                ControlTap.delivering(.keyValueObserver, change, domain: self.groupDefaults.domainName, from: self.simulatedProcess) {
                    if registration.options.contains(.prior) {
                        observer.observeValue(
                            forKeyPath: registration.keyPath, of: self,
                            change: registration.change(old: old, new: nil, isPrior: true), context: registration.context)
                    }
                    observer.observeValue(
                        forKeyPath: registration.keyPath, of: self,
                        change: registration.change(old: old, new: new, isPrior: false), context: registration.context)
                }
            })
    }

    /// Stops the latest `addObserver` of `observer` for `keyPath`. One that
    /// was never added is reported (Apple raises). The observer may call it
    /// from its own `deinit`, as Apple's KVO guide recommends.
    /// - Parameters:
    ///   - observer: The observer that was added.
    ///   - keyPath: The key it was added for.
    public func removeObserver(_ observer: NSObject, forKeyPath keyPath: String) {
        let dying = isDeinitializing(observer)
        removeRegistration(call: "removeObserver(_:forKeyPath: \"\(keyPath)\")") {
            $0.isRegistration(of: observer, isDeinitializing: dying) && $0.keyPath == keyPath
        }
    }

    /// Stops the latest `addObserver` of `observer` for `keyPath` with `context`.
    /// - Parameters:
    ///   - observer: The observer that was added.
    ///   - keyPath: The key it was added for.
    ///   - context: The context it was added with.
    public func removeObserver(_ observer: NSObject, forKeyPath keyPath: String, context: UnsafeMutableRawPointer?) {
        let dying = isDeinitializing(observer)
        removeRegistration(call: "removeObserver(_:forKeyPath: \"\(keyPath)\", context:)") {
            $0.isRegistration(of: observer, isDeinitializing: dying) && $0.keyPath == keyPath && $0.context == context
        }
    }

    private func removeRegistration(call: String, where matches: (KeyValueRegistration) -> Bool) {
        guard let removed = keyValueRegistrations.remove(where: matches) else {
            return FoundationBridge.refuse(call, because: "the observer is not registered for that key path (with that context) on this instance")
        }
        removed.end()
    }
}

// MARK: observe(\.property, options:changeHandler:)

/// The protocol Apple declares `observe(_:options:changeHandler:)` on.
public protocol _KeyValueCodingAndObserving {}

extension UserDefaults: _KeyValueCodingAndObserving {}

extension _KeyValueCodingAndObserving where Self: UserDefaults {
    /// Observes a property of `UserDefaults` declared in an extension, such
    /// as `var theme: String? { string(forKey: "theme") }`: the handler is
    /// called for every change of the keys the property's getter reads (found
    /// by reading it once, now), with the property's values. On Apple
    /// platforms the property must be `@objc dynamic` (which Linux cannot
    /// compile) and named as its key; name it so, and the same code observes
    /// the same changes on both. A property that reads no key is reported and
    /// observes nothing.
    /// - Parameters:
    ///   - keyPath: A property of an extension of `UserDefaults` named as its key.
    ///   - options: Which values the change carries, and `.initial`.
    ///   - changeHandler: Called with the instance and the change.
    /// - Returns: The observation; it stops when invalidated or released.
    public func observe<Value>(
        _ keyPath: KeyPath<Self, Value>, options: NSKeyValueObservingOptions = [],
        changeHandler: @escaping (Self, NSKeyValueObservedChange<Value>) -> Void
    ) -> NSKeyValueObservation {
        let (keys, initial) = KeyReads.recording { self[keyPath: keyPath] }
        guard !keys.isEmpty else {
            Diagnostics.report(
                Diagnostic(
                    kind: .callRefused,
                    message:
                        "UserDefaults.observe(_:options:changeHandler:) of a \(Value.self) property observes nothing: its getter reads no key of this UserDefaults "
                        + "(observe a property whose getter reads its key, such as `var theme: String? { string(forKey: \"theme\") }`)"))
            return NSKeyValueObservation([])
        }
        let last = PropertyValue(initial)
        let handler = KeyPathHandler(changeHandler)
        if options.contains(.initial) {
            handler.call(
                self,
                NSKeyValueObservedChange(
                    kind: .setting, newValue: options.contains(.new) ? initial : nil, oldValue: nil, indexes: nil, isPrior: false))
        }
        let observations = keys.map { key in
            GroupSim.observe(self, key, reportingAs: nil) { [weak self] change in
                guard let self else { return }
                let (old, new) = last.replace { self[keyPath: keyPath] }
                ControlTap.delivering(.keyPathObservation, change, domain: self.groupDefaults.domainName, from: self.simulatedProcess) {
                    if options.contains(.prior) {
                        handler.call(
                            self,
                            NSKeyValueObservedChange(
                                kind: .setting, newValue: nil, oldValue: options.contains(.old) ? old : nil, indexes: nil, isPrior: true))
                    }
                    handler.call(
                        self,
                        NSKeyValueObservedChange(
                            kind: .setting, newValue: options.contains(.new) ? new : nil, oldValue: options.contains(.old) ? old : nil,
                            indexes: nil, isPrior: false))
                }
            }
        }
        return NSKeyValueObservation(observations)
    }
}

/// The caller's handler, called on the threads `observe` names (not required to be Sendable, as KVO's is not).
/// Unchecked Sendable: the handler is a constant, called on the queue `observe` names, as KVO calls a non-Sendable handler.
private final class KeyPathHandler<Object, Value>: @unchecked Sendable {
    let call: (Object, NSKeyValueObservedChange<Value>) -> Void
    init(_ call: @escaping (Object, NSKeyValueObservedChange<Value>) -> Void) { self.call = call }
}

/// The property's value as last told: the next change's old value.
/// Unchecked Sendable: the value is read and replaced under `lock`.
private final class PropertyValue<Value>: @unchecked Sendable {
    private let lock = Locked()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Reads the property anew (outside the lock: the getter reads defaults) and returns the value it replaces.
    func replace(reading: () -> Value) -> (old: Value, new: Value) {
        let new = reading()
        return lock.withLock {
            defer { value = new }
            return (value, new)
        }
    }
}

/// Which keys a piece of code reads through `UserDefaults` on this thread:
/// how a key path to a computed property is turned into the keys it depends on.
enum KeyReads {
    /// How many recordings run (on any thread): while none does, a read costs one atomic load.
    private static let running = Atomic<Int>(0)
    @TaskLocal private static var recorder: Recorder?

    /// Unchecked Sendable: a recorder is reached only through the task-local of the thread that made it, for one getter's call.
    final class Recorder: @unchecked Sendable {
        var keys: [String] = []
    }

    static func recording<T>(_ body: () -> T) -> (keys: [String], value: T) {
        let recorder = Recorder()
        running.add(1, ordering: .relaxed)
        defer { running.subtract(1, ordering: .relaxed) }
        let value = $recorder.withValue(recorder) { body() }
        return (recorder.keys, value)
    }

    /// Called by every read of the face.
    @inline(__always)
    static func note(_ key: String) {
        guard running.load(ordering: .relaxed) > 0, let recorder else { return }
        if !recorder.keys.contains(key) { recorder.keys.append(key) }
    }
}
