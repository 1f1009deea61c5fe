import AppProtocol
import CloudDevice
import Foundation
import GroupDefaults
import PropertyList
import SimulationValues

/// What a control channel's requests do inside the program, through its
/// own `UserDefaults` (docs/protocol.md, "The control channel of your own
/// executable"). A request without `"suite"` is answered by
/// `UserDefaults.standard`, the instance the program's own
/// `UserDefaults.standard` calls use (suites it added included); with
/// `"suite"`, by a `UserDefaults(suiteName:)` the channel keeps for that
/// name. Either way the process's argument and registration domains are in
/// the search list, as for every instance of the process. Only the
/// channel's worker queue calls it (and its thread, for `ready`, before any request).
/// Unchecked Sendable: its instances and stores are touched by the channel's serial worker only (and by its thread before any request, for `ready`).
final class ControlSession: @unchecked Sendable {
    /// A process of its own (a test's), or nil: this process, `SimulatedProcess.current`.
    private let process: SimulatedProcess?
    private lazy var ownStandard: UserDefaults? = process.map { GroupSim.defaults(of: $0) }
    /// `process`'s iCloud store, once a request used it.
    private var ownCloud: NSUbiquitousKeyValueStore?
    private var suites: [String: UserDefaults] = [:]

    init(process: SimulatedProcess?) { self.process = process }

    private var standard: UserDefaults { ownStandard ?? .standard }

    private func defaults(_ suite: String?) throws -> UserDefaults {
        guard let suite else { return standard }
        if let made = suites[suite] { return made }
        guard let made = GroupSim.defaults(suiteName: suite, of: process ?? .current) else {
            throw AppProtocolError.refused(
                "UserDefaults(suiteName: \(DefaultsError.show(suite))) is nil (Apple refuses NSGlobalDomain and the app's own bundle id; "
                    + "leave out \"suite\" for UserDefaults.standard)")
        }
        suites[suite] = made
        return made
    }

    /// Who the program is, what it reads (as `UserDefaults.standard` does) and where.
    func info() -> [String: PlistValue] {
        let standard = standard
        let identity = standard.simulatedProcess.identity
        var info: [String: PlistValue] = [
            "role": "executable", "executable": .string(CommandLine.arguments.first ?? ""),
            "bundleId": .string(identity.bundleIdentifier), "device": .string(identity.device), "root": .string(identity.root.path),
            "suite": .string(standard.groupDefaults.domainName), "path": .string(standard.groupDefaults.path),
            "appGroups": .array(identity.appGroups.sorted().map { .string($0) }),
            "searchList": .array(standard.groupDefaults.searchList.map { .string($0) }),
            "pid": .integer(Int64(getpid())), "protocol": .integer(Int64(ControlProtocol.version)),
        ]
        if let store = SimulationEnvironment.current[GroupSim.keyValueStoreVariable], !store.isEmpty {
            info["icloudKVS"] = .string(store)
        }
        return info
    }

    func perform(_ request: AppRequest, suite: String?) throws -> AppResponse {
        switch request {
        case .get(let key):
            let found = try defaults(suite).groupDefaults.lookup(key)
            return .value(key: key, value: found?.value, domain: found?.domain)
        case .typedGet(let key, let kind):
            return try typedValue(key, as: kind, suite: suite)
        case .forced(let key, let domain):
            let defaults = try defaults(suite)
            return .boolean(domain.map { defaults.objectIsForced(forKey: key, inDomain: $0) } ?? defaults.objectIsForced(forKey: key))
        case .set(let key, let value):
            try defaults(suite).write(value, forKey: key)
            return .done
        case .remove(let key):
            try defaults(suite).removeObject(forKey: key)
            return .done
        case .dump:
            let store = try defaults(suite).groupDefaults
            return .values(
                store.dictionaryRepresentation().keys.sorted().compactMap { key in
                    store.lookup(key).map { (key: key, value: $0.value, domain: $0.domain) }
                })
        case .register(let values):
            let defaults = try defaults(suite)
            defaults.groupDefaults.register(defaults: values)
            defaults.postDidChange()
            return .done
        case .addSuite(let name):
            try defaults(suite).groupDefaults.addSuite(named: name)
            return .done
        case .removeSuite(let name):
            try defaults(suite).groupDefaults.removeSuite(named: name)
            return .done
        case .synchronize:
            try defaults(suite).groupDefaults.flush()
            // The iCloud store too, if the program (or a kvs- request) made it; never made just for this.
            _ = try (process == nil ? NSUbiquitousKeyValueStore.defaultIfMade : ownCloud)?.store?.flush()
            return .done
        case .clear:
            let defaults = try defaults(suite)
            try defaults.groupDefaults.removePersistentDomain(forName: defaults.groupDefaults.domainName)
            defaults.postDidChange()
            return .done
        case .increment(let key, let by):
            let defaults = try defaults(suite)
            let sum = try defaults.groupDefaults.increment(key, by: by)
            defaults.postDidChange(key: key)
            return .integer(sum)
        case .append(let key, let values):
            let defaults = try defaults(suite)
            try defaults.groupDefaults.transaction { try DefaultsWriteRequest.arrayAdd(key: key, values: values).apply(to: &$0) }
            defaults.postDidChange(key: key)
            return .done
        case .mergeDictionary(let key, let entries):
            let defaults = try defaults(suite)
            try defaults.groupDefaults.transaction { try DefaultsWriteRequest.dictAdd(key: key, entries: entries).apply(to: &$0) }
            defaults.postDidChange(key: key)
            return .done
        case .reloadTimeline, .reloadWidgets, .performIntent:
            if let handler = ControlRequestHandlers.handler(for: request) { return try handler(request) }
            switch request {
            case .reloadTimeline:
                throw AppProtocolError.refused(
                    "reload belongs to a widget: the simulated widget, or a program whose widget runs (SimulatedWidgetKit); this program is neither")
            case .reloadWidgets:
                throw AppProtocolError.refused(
                    "reload-widgets belongs to the simulated main app, or a program that uses WidgetCenter (SimulatedWidgetKit); this program does neither"
                )
            default:
                throw AppProtocolError.refused(
                    "perform-intent belongs to the simulated main app (its manifest's intents), or a program that offers App Intents (SimulatedAppIntents); this program offers none"
                )
            }
        case .cloudGet, .cloudSet, .cloudRemove, .cloudDump, .cloudSynchronize:
            return try performCloud(request)
        case .info:
            return .info(info())
        case .searchList:
            return .searchList(try defaults(suite).groupDefaults.searchList)
        case .ping, .flushEvents, .exit:
            return .done  // the channel answers these itself
        }
    }

    /// A typed getter's answer, as the program's `UserDefaults` converts.
    private func typedValue(_ key: String, as kind: TypedRead, suite: String?) throws -> AppResponse {
        let defaults = try defaults(suite)
        let value: PlistValue? =
            switch kind {
            case .bool: .bool(defaults.bool(forKey: key))
            case .integer: .integer(Int64(defaults.integer(forKey: key)))
            case .double: .real(defaults.double(forKey: key))
            case .string: defaults.string(forKey: key).map { .string($0) }
            case .url: defaults.url(forKey: key).map { .string($0.absoluteString) }
            case .stringArray: defaults.stringArray(forKey: key).map { .array($0.map { .string($0) }) }
            }
        return .value(key: key, value: value, domain: defaults.groupDefaults.lookup(key)?.domain)
    }

    /// A request to `NSUbiquitousKeyValueStore.default` as the program sees it.
    private func performCloud(_ request: AppRequest) throws -> AppResponse {
        switch request {
        case .cloudGet(let key):
            return .value(key: key, value: try cloudStore().object(forKey: key), domain: nil)
        case .cloudSet(let key, let value):
            try cloudWrite(value, forKey: key)
            return .done
        case .cloudRemove(let key):
            try cloudWrite(nil, forKey: key)
            return .done
        case .cloudDump:
            let values = try cloudStore().dictionaryRepresentation()
            return .values(values.keys.sorted().compactMap { key in values[key].map { (key: key, value: $0, domain: "icloud") } })
        case .cloudSynchronize:
            return .boolean(try cloudStore().synchronize())
        default:
            throw AppProtocolError.refused("\(request) is not a request to the iCloud key-value store")
        }
    }

    /// A driver's write stands for the program's own call: a key the store refuses ends the process as that call does.
    private func cloudWrite(_ value: PlistValue?, forKey key: String) throws {
        let (object, store) = try cloudStores()
        try object.write(value, forKey: key, in: store)
    }

    /// `NSUbiquitousKeyValueStore.default`, as the program sees it (without
    /// the entitlement it stays on the device, and said so once).
    private func cloudStore() throws -> UbiquitousStore { try cloudStores().store }

    private func cloudStores() throws -> (object: NSUbiquitousKeyValueStore, store: UbiquitousStore) {
        let made: NSUbiquitousKeyValueStore
        if let process {
            made = ownCloud ?? GroupSim.ubiquitousStore(of: process, environment: SimulationEnvironment.current.values)
            ownCloud = made
        } else {
            made = .default
        }
        // The driver hears the store's notices as deliveries from now on, as an observer would.
        made.letNoticesGo()
        guard let store = made.store else {
            throw AppProtocolError.refused("NSUbiquitousKeyValueStore.default could not be opened on this device (a reload-failed warning said why)")
        }
        return (made, store)
    }
}
