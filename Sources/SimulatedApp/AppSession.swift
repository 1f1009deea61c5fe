import AppInstall
import AppModel
import AppProtocol
import CloudDevice
import CloudModel
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import SimulationValues

/// One running target of a simulated app on one device: its identity and
/// entitlements, its defaults, and the commands both faces share.
/// Unchecked Sendable: its variables (observation, notification token, widget) are set only in `init`, before the session is shared; the rest is constant or locks its own state.
final class AppSession: @unchecked Sendable {
    let role: Role
    let manifest: AppManifest
    let target: AppManifest.Target
    let context: DefaultsContext
    /// The defaults the target reads and writes: its suite, or its standard
    /// domain when the manifest says `suite: standard`.
    let store: GroupDefaults
    let events: AppEventSink
    /// The iCloud key-value store of the target's entitlement (nil without one).
    let cloudStore: UbiquitousStore?
    /// Mirrors prefixed keys between `store` and `cloudStore` (manifest `icloud-bridge`).
    let cloudBridge: CloudDefaultsBridge?
    private var observation: DefaultsObservation?
    private var notificationToken: NSObjectProtocol?
    private(set) var widget: WidgetTimeline?
    /// Launched by the system in the background to run an intent, not by the person.
    let launchedInBackground: Bool
    /// Launched by the system ahead of time (prewarming), not by the person.
    let prewarmed: Bool
    /// Whether the device's protected data was available when the store was opened (`ProtectedData`).
    let protectedDataAtOpen: Bool

    package init(
        role: Role, manifest: AppManifest, root: SimulationRoot, device: String, launchArguments: [String], launchedInBackground: Bool = false,
        prewarmed: Bool = false, events: AppEventSink
    ) throws {
        self.role = role
        self.launchedInBackground = launchedInBackground
        self.prewarmed = prewarmed
        self.manifest = manifest
        self.events = events
        target = try manifest.target(role)
        context = DefaultsContext(root: root, device: device, bundleIdentifier: target.bundleIdentifier, appGroups: Set(target.appGroups))
        // Volatile domains first, as at a real launch: arguments, then registration.
        ProcessDomains.shared.setLaunchArguments(launchArguments)
        ProcessDomains.shared.register(target.registeredDefaults)
        protectedDataAtOpen = try Self.awaitProtectedData(manifest.protectedData, root: root, device: device)
        store =
            target.usesStandardDefaults
            ? try GroupDefaults(context: context)
            : try GroupDefaults(suiteName: target.suite, context: context)
        observation = store.observe(nil) { [events] change in events.emit(.change(ValueChange(change))) }
        notificationToken = NotificationCenter.default.addObserver(
            forName: GroupDefaults.didChangeNotification, object: store, queue: nil
        ) { [events] _ in events.emit(.notification(name: "didChange")) }
        if let identifier = target.keyValueStore {
            let cloudStore = try UbiquitousStore(cloud: DeviceCloud(root: root, device: device), identifier: identifier) { [events] change in
                events.emit(.cloudChange(reason: change.reason.rawValue, keys: change.keys))
            }
            self.cloudStore = cloudStore
            let defaults: GroupDefaults = store
            cloudBridge = target.cloudBridge.map { spec in
                CloudDefaultsBridge(
                    defaults: defaults, store: cloudStore, prefix: spec.prefix, mode: CloudDefaultsBridge.Mode(rawValue: spec.mode) ?? .fixed)
            }
        } else {
            cloudStore = nil
            cloudBridge = nil
        }
        if role == .widget, let widgetManifest = target.widget {
            widget = try WidgetTimeline(manifest: widgetManifest, session: self)
        }
    }

    /// Starts what runs by itself (the widget's first render and its timeline).
    func start() {
        if cloudStore != nil { startCloudIfNeeded() }
        cloudBridge?.start()
        widget?.start()
    }

    var info: [String: PlistValue] {
        var info: [String: PlistValue] = [
            "role": .string(role.rawValue), "app": .string(manifest.name), "bundleId": .string(target.bundleIdentifier),
            "device": .string(context.device), "root": .string(context.root.path), "suite": .string(store.domainName),
            "path": .string(store.path), "appGroups": .array(target.appGroups.map { .string($0) }),
            "searchList": .array(store.searchList.map { .string($0) }), "pid": .integer(Int64(getpid())),
            "protocol": .integer(Int64(ControlProtocol.version)),
        ]
        if let kvs = target.keyValueStore { info["icloudKVS"] = .string(kvs) }
        if launchedInBackground { info["launch"] = .string("background") }
        if prewarmed { info["launch"] = .string("prewarm") }
        if !protectedDataAtOpen { info["protectedData"] = .string("unavailable") }
        if let bridge = cloudBridge { info["icloudBridge"] = .string("\(bridge.mode.rawValue) \(bridge.prefix)*") }
        return info
    }

    func perform(_ command: AppRequest) throws -> AppResponse {
        switch command {
        case .get(let key):
            let found = store.lookup(key)
            return .value(key: key, value: found?.value, domain: found?.domain)
        case .typedGet(let key, let kind):
            return .value(key: key, value: typedValue(forKey: key, as: kind), domain: store.lookup(key)?.domain)
        case .forced(let key, let domain):
            return .boolean(domain.map { store.isForced(key, inDomain: $0) } ?? store.isForced(key))
        case .set, .remove, .register, .addSuite, .removeSuite, .clear, .increment, .append, .mergeDictionary:
            return try performWrite(command)
        case .dump:
            return .values(effectiveValues())
        case .synchronize:
            // The bridge's answer to what the sync agent already wrote (the first
            // download) is part of what this process has to save: a scenario's
            // wait-cloud that saves the apps first must not miss it.
            cloudStore?.takeInNotices()
            cloudBridge?.waitUntilIdle()
            try store.flush()
            try cloudStore?.flush()
            return .done
        case .reloadTimeline:
            guard let widget else { throw AppProtocolError.refused("only a widget has a timeline to reload") }
            widget.reload(reason: "request")
            return .done
        case .reloadWidgets:
            try requestWidgetReload()
            return .done
        case .cloudGet, .cloudSet, .cloudRemove, .cloudDump, .cloudSynchronize:
            return try performCloud(command)
        case .performIntent(let name, let parameters):
            return try performIntentInProcess(name, parameters: parameters)
        case .info:
            return .info(info)
        case .searchList:
            return .searchList(store.searchList)
        case .ping, .flushEvents:
            return .done  // its events are written on the thread that makes them, before any later answer
        case .exit:
            return .done
        }
    }

    /// An App Intent run in the app's own process (manifest `intents: in-app`):
    /// the write is this process's, so its observers hear it as such at once.
    private func performIntentInProcess(_ name: String, parameters: [String: String]) throws -> AppResponse {
        guard role == .mainApp else { throw AppProtocolError.refused("perform-intent is for the main app; the \(role.rawValue) runs no intents") }
        guard manifest.intentsRun == .inApp else {
            throw AppProtocolError.refused(
                "the app '\(manifest.name)' runs its intents in its intent extension (manifest intents: extension), not in the app")
        }
        let value = try IntentPerformer.perform(name, parameters: parameters, session: self)
        let key = manifest.intents[name]!.key
        events.emit(.intentResult(intent: name, key: key, value: value))
        return .value(key: key, value: value, domain: store.domainName)
    }

    /// A request that changes the process's defaults (or its search list).
    private func performWrite(_ command: AppRequest) throws -> AppResponse {
        switch command {
        case .set(let key, let value):
            store.set(value, forKey: key)
        case .remove(let key):
            store.removeObject(forKey: key)
        case .register(let defaults):
            store.register(defaults: defaults)
        case .addSuite(let name):
            try store.addSuite(named: name)
        case .removeSuite(let name):
            store.removeSuite(named: name)
        case .clear:
            try clearSuite()
        case .increment(let key, let by):
            return .integer(try store.increment(key, by: by))
        case .append(let key, let values):
            try append(values, to: key)
        case .mergeDictionary(let key, let entries):
            try store.transaction { try DefaultsWriteRequest.dictAdd(key: key, entries: entries).apply(to: &$0) }
        default:
            throw AppProtocolError.refused("\(command) is not a write to the defaults")
        }
        return .done
    }

    /// A request to the process's iCloud key-value store (its entitlement's).
    private func performCloud(_ command: AppRequest) throws -> AppResponse {
        switch command {
        case .cloudGet(let key):
            return .value(key: key, value: try entitledCloudStore().object(forKey: key), domain: nil)
        case .cloudSet(let key, let value):
            try cloudWrite(value, forKey: key)
            return .done
        case .cloudRemove(let key):
            try cloudWrite(nil, forKey: key)
            return .done
        case .cloudDump:
            let values = try entitledCloudStore().dictionaryRepresentation()
            return .values(values.keys.sorted().compactMap { key in values[key].map { (key: key, value: $0, domain: "icloud") } })
        case .cloudSynchronize:
            return .boolean(try entitledCloudStore().synchronize())
        default:
            throw AppProtocolError.refused("\(command) is not a request to the iCloud key-value store")
        }
    }

    /// A typed getter's answer, as `UserDefaults` converts (`bool(forKey:)` and the others).
    private func typedValue(forKey key: String, as kind: TypedRead) -> PlistValue? {
        switch kind {
        case .bool: .bool(store.bool(forKey: key))
        case .integer: .integer(Int64(store.integer(forKey: key)))
        case .double: .real(store.double(forKey: key))
        case .string: store.string(forKey: key).map { .string($0) }
        case .url: store.url(forKey: key).map { .string($0.absoluteString) }
        case .stringArray: store.stringArray(forKey: key).map { .array($0.map { .string($0) }) }
        }
    }

    /// Every effective key, sorted, with its value and the domain it comes from.
    private func effectiveValues() -> [(key: String, value: PlistValue, domain: String)] {
        store.dictionaryRepresentation().keys.sorted().compactMap { key in
            store.lookup(key).map { (key: key, value: $0.value, domain: $0.domain) }
        }
    }

    // The operations that other code of the process performs too (the
    // console's `clear`, the intents) are methods of their own, called by
    // `perform` and by that code alike. That code must not call `perform`
    // and drop its response: swift-frontend 6.3.1 -O inlined `perform` there
    // and crashed ("Invalid SIL provided to OSSACompleteLifetime", in
    // SILCombine, on `ConsoleLoop.clear` and `IntentPerformer.perform`).

    /// Removes every key of the suite, for every process that shares it.
    func clearSuite() throws {
        try store.removePersistentDomain(forName: store.domainName)
    }

    /// Appends to an array value, atomically across processes.
    func append(_ values: [PlistValue], to key: String) throws {
        try store.transaction { try DefaultsWriteRequest.arrayAdd(key: key, values: values).apply(to: &$0) }
    }

    /// An app whose device is signed in needs the cloud and its device's
    /// agent: if they are not running, they are started in the background
    /// (as `groupsim cloud start` does) and run until `groupsim cloud stop`.
    private func startCloudIfNeeded() {
        guard SimulationEnvironment.current[CloudDaemons.autostartVariable] != "0",
            (try? DeviceCloud(root: context.root, device: context.device).readSettings().account) != nil
        else { return }
        let folder = (ownExecutablePath() as NSString?)?.deletingLastPathComponent ?? ""
        let daemons = CloudDaemons(root: context.root, groupsim: folder + "/groupsim")
        guard daemons.server == nil || daemons.agent(context.device) == nil else { return }
        guard FileManager.default.isExecutableFile(atPath: daemons.groupsim) else {
            events.emit(
                .warning(
                    kind: "cloud-not-started",
                    message:
                        "the device is signed in to iCloud but the cloud is not running, and there is no groupsim beside \(role.rawValue) to start it; run `groupsim cloud start`"
                ))
            return
        }
        do { try daemons.start(devices: [context.device]) } catch {
            events.emit(.warning(kind: "cloud-not-started", message: "could not start the cloud: \(error); run `groupsim cloud start`"))
        }
    }

    /// The target's key-value store; without the entitlement the request is
    /// refused, as `NSUbiquitousKeyValueStore` is unusable without it.
    /// A write to the iCloud store; a key the store refuses ends the process
    /// as Apple's exception ends an app, after saying so as an error event.
    private func cloudWrite(_ value: PlistValue?, forKey key: String) throws {
        do { try entitledCloudStore().set(value, forKey: key) } catch let tooLong as CloudDeviceError where tooLong.isUncaughtException {
            events.emit(.error(message: tooLong.uncaughtMessage))
            tooLong.raise()
        }
    }

    private func entitledCloudStore() throws -> UbiquitousStore {
        guard let cloudStore else {
            let message =
                "\(target.bundleIdentifier) has no iCloud key-value store entitlement "
                + "(com.apple.developer.ubiquity-kvstore-identifier): add icloud-kvs to its target in the manifest"
            events.emit(.warning(kind: Diagnostic.Kind.missingEntitlement.rawValue, message: message))
            throw AppProtocolError.refused(message)
        }
        return cloudStore
    }

    /// Commits what is pending and says goodbye; used on every way out.
    /// Returns the status to exit with: 74 (EX_IOERR) instead of 0 when a
    /// change could not be saved, so the failure is not mistaken for success.
    /// Every open domain is saved (the suite, suites added, the widget
    /// center), and every failure reported, before the exit event: nothing
    /// is said after it.
    func finish(status: Int32) -> Int32 {
        let saved = DomainRegistry.shared.saveBeforeExit() && ((try? cloudStore?.flush()) != nil || cloudStore == nil)
        let final = saved || status != 0 ? status : 74
        // Changes are announced on the notification queue: let them all out before saying goodbye.
        PersistentDomain.deliverPendingNotifications()
        events.emit(.exit(status: final))
        return final
    }
}
