import AppProtocol
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import SharedFiles
import SimulationValues

public let NSUbiquitousKeyValueStoreChangeReasonKey = "NSUbiquitousKeyValueStoreChangeReasonKey"
public let NSUbiquitousKeyValueStoreChangedKeysKey = "NSUbiquitousKeyValueStoreChangedKeysKey"
public let NSUbiquitousKeyValueStoreServerChange = 0
public let NSUbiquitousKeyValueStoreInitialSyncChange = 1
public let NSUbiquitousKeyValueStoreQuotaViolationChange = 2
public let NSUbiquitousKeyValueStoreAccountChange = 3

/// Foundation's `NSUbiquitousKeyValueStore` over the simulated iCloud
/// key-value store (`docs/cloud.md`): the device's copy of the store named
/// by the process's entitlement (`GROUPSIM_KVS_IDENTIFIER`, which `groupsim
/// exec` sets from the manifest's `icloud-kvs`). Values arriving from other
/// devices post `didChangeExternallyNotification` with Apple's `userInfo`.
/// Unchecked Sendable, as Apple declares it: `store` is set once in `init`, and `UbiquitousStore` locks its own state; the shared instance is made under `lock`.
open class NSUbiquitousKeyValueStore: NSObject, @unchecked Sendable {
    public static let didChangeExternallyNotification = Notification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification")

    private static let lock = Locked()
    nonisolated(unsafe) private static var shared: NSUbiquitousKeyValueStore?

    /// The default store if something made it already (a control channel's
    /// `synchronize` saves it without making it, and so without a warning).
    static var defaultIfMade: NSUbiquitousKeyValueStore? { lock.withLock { shared } }

    open class var `default`: NSUbiquitousKeyValueStore {
        lock.withLock {
            if let shared { return shared }
            let store = NSUbiquitousKeyValueStore()
            shared = store
            return store
        }
    }

    /// nil only when the device's copy could not be opened (reported): every read is then empty.
    package private(set) var store: UbiquitousStore?

    /// Holds the store's notices until the app could have observed them (NSUbiquitousKeyValueStore+FirstNotice.swift).
    let noticeGate = NoticeGate()
    /// The process and the store's identifier its notices are reported with (set once the copy is open).
    private var postsFor: (process: SimulatedProcess, identifier: String)?

    /// Posts `didChangeExternallyNotification` with Apple's `userInfo`, and tells a driver.
    func post(_ change: ExternalChange) {
        let post = {
            NotificationCenter.default.post(
                name: Self.didChangeExternallyNotification, object: self,
                userInfo: [
                    NSUbiquitousKeyValueStoreChangeReasonKey: NSNumber(value: change.reason.appleValue),
                    NSUbiquitousKeyValueStoreChangedKeysKey: change.keys,
                ])
        }
        guard ControlTap.isServing, let (process, storeIdentifier) = postsFor else { return post() }
        ControlTap.delivering(
            {
                .delivery(
                    Delivery(
                        mechanism: .didChangeExternally, key: nil, old: nil, new: nil, origin: "other-device", domain: storeIdentifier,
                        reason: change.reason.rawValue, keys: change.keys))
            }, from: process, post)
        // Apple says nothing but this notification; a driver is told loudly.
        if change.reason == .quotaViolationChange {
            ControlTap.emit(
                .warning(
                    kind: "quota-violation",
                    message: "NSUbiquitousKeyValueStore \(storeIdentifier): "
                        + "\(change.keys.joined(separator: ", ")) over Apple's limits (docs/cloud.md): kept on this device, never uploaded"
                ), from: process)
        }
    }

    /// The current process's store, in a new instance (`default` is the
    /// shared one). Designated, as Apple's `init()` is, so a subclass (a
    /// test's mock) inherits it.
    public override init() {
        super.init()
        openStore(process: .current, environment: SimulationEnvironment.current.values, report: Diagnostics.report)
    }

    /// The store of `process`'s entitlement (`GroupSim.ubiquitousStore(of:environment:report:)`).
    init(process: SimulatedProcess, environment: [String: String], report: (Diagnostic) -> Void) {
        super.init()
        openStore(process: process, environment: environment, report: report)
    }

    /// Opens the device's copy of the store `environment` names for
    /// `process`. Without an entitlement (no `GROUPSIM_KVS_IDENTIFIER`) it is
    /// reported loudly, once per process and store, as on a device, and the
    /// store stays on the device: never synced, `synchronize()` false.
    /// `report`: where the missing entitlement is said.
    private func openStore(process: SimulatedProcess, environment: [String: String], report: (Diagnostic) -> Void) {
        let identity = process.identity
        var identifier = environment[GroupSim.keyValueStoreVariable] ?? ""
        let entitled = !identifier.isEmpty
        if !entitled { identifier = identity.bundleIdentifier }
        if !entitled, process.isFirstTime(warning: "no-kvs-entitlement \(identifier)") {
            report(
                Diagnostic(
                    kind: .missingEntitlement,
                    message: "\(identity.bundleIdentifier) has no com.apple.developer.ubiquity-kvstore-identifier entitlement "
                        + "(\(GroupSim.keyValueStoreVariable) is not set; groupsim exec sets it from the manifest's icloud-kvs): "
                        + "NSUbiquitousKeyValueStore stays on this device and synchronize() returns false"))
        }
        postsFor = (process, identifier)
        Self.madeStores.add(self)
        do {
            store = try UbiquitousStore(
                cloud: DeviceCloud(root: identity.root, device: identity.device), identifier: identifier, syncs: entitled
            ) { [weak self] change in
                guard let self, self.noticeGate.admits(change) else { return }
                self.post(change)
            }
        } catch {
            report(Diagnostic(kind: .reloadFailed, message: "NSUbiquitousKeyValueStore \(identifier) could not be opened: \(error)"))
        }
    }

    // MARK: Reading

    /// The value in this device's copy of the store (numbers and Booleans as `NSNumber`), or nil.
    /// - Parameter aKey: The key.
    /// - Returns: The value, or nil.
    open func object(forKey aKey: String) -> Any? { store?.object(forKey: aKey).map(FoundationBridge.object) }
    /// nil unless the value is a string.
    /// - Parameter aKey: The key.
    /// - Returns: The string.
    open func string(forKey aKey: String) -> String? { store?.string(forKey: aKey) }
    /// nil unless the value is an array.
    /// - Parameter aKey: The key.
    /// - Returns: The array.
    open func array(forKey aKey: String) -> [Any]? { store?.array(forKey: aKey)?.map(FoundationBridge.object) }
    /// nil unless the value is a dictionary.
    /// - Parameter aKey: The key.
    /// - Returns: The dictionary.
    open func dictionary(forKey aKey: String) -> [String: Any]? { store?.dictionary(forKey: aKey).map(FoundationBridge.dictionary) }
    /// nil unless the value is data.
    /// - Parameter aKey: The key.
    /// - Returns: The data.
    open func data(forKey aKey: String) -> Data? { store?.data(forKey: aKey) }
    /// 0 when absent or not a number.
    /// - Parameter aKey: The key.
    /// - Returns: The integer.
    open func longLong(forKey aKey: String) -> Int64 { store?.longLong(forKey: aKey) ?? 0 }
    /// 0 when absent or not a number.
    /// - Parameter aKey: The key.
    /// - Returns: The number.
    open func double(forKey aKey: String) -> Double { store?.double(forKey: aKey) ?? 0 }
    /// false when absent or not a Boolean.
    /// - Parameter aKey: The key.
    /// - Returns: The Boolean.
    open func bool(forKey aKey: String) -> Bool { store?.bool(forKey: aKey) ?? false }
    open var dictionaryRepresentation: [String: Any] { FoundationBridge.dictionary(store?.dictionaryRepresentation() ?? [:]) }

    // MARK: Writing

    /// Sets a property list in this device's copy; it reaches the cloud when the device syncs. A value that is not a property list, or a key or store over iCloud's limits, changes nothing (reported).
    /// - Parameters:
    ///   - anObject: The value; nil removes the key.
    ///   - aKey: The key.
    open func set(_ anObject: Any?, forKey aKey: String) {
        guard let anObject else { return removeObject(forKey: aKey) }
        guard let value = FoundationBridge.propertyList(anObject, call: "NSUbiquitousKeyValueStore.set(_:forKey: \"\(aKey)\")", path: aKey) else {
            return
        }
        write(value, forKey: aKey)
    }

    /// Sets a string; nil removes the key.
    /// - Parameters:
    ///   - aString: The value.
    ///   - aKey: The key.
    open func set(_ aString: String?, forKey aKey: String) { write(aString.map { .string($0) }, forKey: aKey) }
    /// Sets data; nil removes the key.
    /// - Parameters:
    ///   - aData: The value.
    ///   - aKey: The key.
    open func set(_ aData: Data?, forKey aKey: String) { write(aData.map { .data($0) }, forKey: aKey) }
    /// Sets an array of property lists; nil removes the key.
    /// - Parameters:
    ///   - anArray: The value.
    ///   - aKey: The key.
    open func set(_ anArray: [Any]?, forKey aKey: String) { set(anArray as Any?, forKey: aKey) }
    /// Sets a dictionary of property lists; nil removes the key.
    /// - Parameters:
    ///   - aDictionary: The value.
    ///   - aKey: The key.
    open func set(_ aDictionary: [String: Any]?, forKey aKey: String) { set(aDictionary as Any?, forKey: aKey) }
    /// Sets an integer.
    /// - Parameters:
    ///   - value: The value.
    ///   - aKey: The key.
    open func set(_ value: Int64, forKey aKey: String) { write(.integer(value), forKey: aKey) }
    /// Sets a `Double`.
    /// - Parameters:
    ///   - value: The value.
    ///   - aKey: The key.
    open func set(_ value: Double, forKey aKey: String) { write(.real(value), forKey: aKey) }
    /// Sets a Boolean.
    /// - Parameters:
    ///   - value: The value.
    ///   - aKey: The key.
    open func set(_ value: Bool, forKey aKey: String) { write(.bool(value), forKey: aKey) }
    /// Removes the key from this device's copy; the removal syncs as a change.
    /// - Parameter aKey: The key.
    open func removeObject(forKey aKey: String) { write(nil, forKey: aKey) }

    /// Saves this device's copy and lets external-change notifications be posted.
    /// - Returns: false when the app has no iCloud key-value entitlement or the store could not be opened, as Apple's returns false without the entitlement.
    @discardableResult
    open func synchronize() -> Bool {
        // Apple's pattern registers for the notification, then synchronizes: by now the app could observe.
        letNoticesGo()
        return store?.synchronize() ?? false
    }

    private func write(_ value: PlistValue?, forKey key: String) {
        guard let store else { return }
        do { try write(value, forKey: key, in: store) } catch {
            Diagnostics.report(
                Diagnostic(
                    kind: .commitFailed,
                    message: "NSUbiquitousKeyValueStore could not store \"\(key)\" in \(store.identifier): "
                        + "\(errorClause(error)). The value is unchanged."))
        }
    }

    /// A write as the app's own call makes it, the program's or a driver's (`kvs-set`, `kvs-remove`): a key over the
    /// store's 64 bytes ends the process, as Apple's store raises NSInvalidArgumentException, which no Swift code can
    /// catch; a driver is told first, with an `error` event. Any other refusal (a value nested too deep) is thrown.
    func write(_ value: PlistValue?, forKey key: String, in store: UbiquitousStore) throws {
        do { try store.set(value, forKey: key) } catch let tooLong as CloudDeviceError where tooLong.isUncaughtException {
            if let (process, _) = postsFor { ControlTap.sayBeforeEnding(.error(message: tooLong.uncaughtMessage), from: process) }
            tooLong.raise()
        }
    }
}
