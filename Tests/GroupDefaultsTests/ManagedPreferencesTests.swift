import Foundation
import PropertyList
import SharedFiles
import TestSupport
import Testing

@testable import GroupDefaults

/// The managed domain (what an administrator forces): its place at the top of
/// the search list, `isForced`, changes reaching observers, and bad files.
@Suite struct ManagedPreferencesTests {
    let fixture = Fixture()

    private func manage(_ f: Fixture, _ change: ManagedChange, for bundle: String = "com.example.app") throws {
        try ManagedPreferences.update(root: SimulationRoot(path: f.root.path), device: "iPhone", domain: bundle) { change.apply(to: &$0) }
    }

    /// Waits (bounded) until `defaults` reads `value` for `key`, told by its observer.
    private func waitUntil(_ defaults: GroupDefaults, _ key: String, reads value: PlistValue?) -> Bool {
        let told = DispatchSemaphore(value: 0)
        let observation = defaults.observe(key) { _ in told.signal() }
        defer { observation.cancel() }
        let deadline = DispatchTime.now() + 10
        while defaults.value(forKey: key) != value {
            if told.wait(timeout: deadline) == .timedOut { return defaults.value(forKey: key) == value }
        }
        return true
    }

    @Test func aForcedKeyWinsOverLaunchArgumentsAndTheAppsOwnWrites() throws {
        let f = fixture
        try manage(f, .set(key: "k", value: "forced"))
        let defaults = try f.standard()
        f.process.setLaunchArguments(["-k", "argument"])
        defaults.set("own", forKey: "k")
        #expect(defaults.lookup("k")! == (.string("forced"), DomainName.managed))
        #expect(defaults.searchList.first == DomainName.managed)
        #expect(defaults.isForced("k"))
        #expect(!defaults.isForced("other"))
        // The write is kept in the app's own domain, never read back while forced.
        try defaults.flush()
        #expect(try SharedPlistFile.read(path: defaults.path)?["k"] == "own")
        #expect(defaults.value(forKey: "k") == "forced")
    }

    @Test func anUnmanagedAppListsNoManagedDomainAndOpeningItMakesNoFile() throws {
        let defaults = try fixture.standard()
        #expect(defaults.searchList.first == DomainName.argument)
        #expect(!defaults.isForced("k"))
        #expect(!FileManager.default.fileExists(atPath: fixture.root.path + "/devices/iPhone/Library/Managed Preferences"))
    }

    @Test func aSetRightAfterARead_isNotReadBack() throws {
        let f = fixture
        try manage(f, .set(key: "k", value: 1), for: f.group)
        let defaults = try f.suite()
        #expect(defaults.value(forKey: "k") == 1)
        // The cached snapshot is carried through the set: the forced layer must still hide it.
        defaults.set(2, forKey: "k")
        #expect(defaults.value(forKey: "k") == 1)
        #expect(defaults.lookup("k")?.domain == DomainName.managed)
    }

    @Test func anAdministratorsChangeReachesARunningInstanceAndItsObserver() throws {
        let f = fixture
        let defaults = try f.standard()
        defaults.set("own", forKey: "k")
        try defaults.flush()
        let changes = Changes()
        let observation = defaults.observe("k") { changes.add($0) }
        defer { observation.cancel() }
        try manage(f, .set(key: "k", value: "forced"))
        #expect(waitUntil(defaults, "k", reads: "forced"))
        try manage(f, .remove(key: "k"))
        #expect(waitUntil(defaults, "k", reads: "own"))
        #expect(defaults.lookup("k")?.domain == "com.example.app")
        PersistentDomain.deliverPendingNotifications()
        let seen = changes.all.map { ($0.new, $0.valueDomain) }
        #expect(seen.count == 2)
        #expect(seen.first.map { $0.0 == "forced" && $0.1 == DomainName.managed } == true)
        #expect(seen.last.map { $0.0 == "own" && $0.1 == "com.example.app" } == true)
    }

    @Test func forcedInAnotherDomainIsThatDomainsManagedFile() throws {
        let f = fixture
        try manage(f, .set(key: "k", value: true), for: "com.example.other")
        let defaults = try f.standard()
        #expect(!defaults.isForced("k"))
        #expect(defaults.isForced("k", inDomain: "com.example.other"))
        #expect(!defaults.isForced("j", inDomain: "com.example.other"))
        #expect(!defaults.isForced("k", inDomain: "com.example.unmanaged"))
        #expect(!defaults.isForced("k", inDomain: "../escape"))
    }

    /// Managed preferences are per domain, as CoreFoundation's search list has "this app, managed" for the
    /// instance's own domain: the app's forced keys are its standard instance's, an app group's are its suite's.
    @Test func aSuiteIsManagedByItsOwnDomainNotTheApps() throws {
        let f = fixture
        try manage(f, .set(key: "k", value: "app's"))
        try manage(f, .configuration(["server": "https://mdm.example.com"]))
        try manage(f, .set(key: "j", value: "group's"), for: f.group)
        let standard = try f.standard()
        let suite = try f.suite()
        suite.set("own", forKey: "k")
        #expect(standard.lookup("k")! == (.string("app's"), DomainName.managed))
        #expect(suite.lookup("k")! == (.string("own"), f.group))
        #expect(suite.value(forKey: ManagedPreferences.configurationKey) == nil)
        #expect(suite.lookup("j")! == (.string("group's"), DomainName.managed))
        #expect(standard.value(forKey: "j") == nil)
        #expect(suite.isForced("j") && !suite.isForced("k") && standard.isForced("k") && !standard.isForced("j"))
        #expect(suite.isForced("k", inDomain: "com.example.app") && standard.isForced("j", inDomain: f.group))
        #expect(suite.isForced("j", inDomain: f.group) && !suite.isForced("k", inDomain: f.group))
        #expect(suite.searchList.first == DomainName.managed)
    }

    @Test func theManagedConfigurationIsADictionaryOrRefused() throws {
        let f = fixture
        try manage(f, .configuration(["server": "https://mdm.example.com"]))
        let defaults = try f.standard()
        #expect(defaults.value(forKey: ManagedPreferences.configurationKey) == .dictionary(["server": "https://mdm.example.com"]))
        #expect(throws: DefaultsError.self) { try manage(f, .set(key: ManagedPreferences.configurationKey, value: "not a dictionary")) }
        // Refused whole: the file still holds the configuration that was there.
        let onDisk = try ManagedPreferences.read(root: SimulationRoot(path: f.root.path), device: "iPhone", domain: "com.example.app")
        #expect(onDisk?[ManagedPreferences.configurationKey] == .dictionary(["server": "https://mdm.example.com"]))
    }

    @Test func aFileWhoseConfigurationIsNotADictionaryIsCorruptNotLost() throws {
        let f = fixture
        let root = SimulationRoot(path: f.root.path)
        let path = try root.managedPreferencesPath(device: "iPhone", domain: "com.example.app")
        // Written by someone who skipped the check (another tool).
        try SharedPlistFile(path: path, root: root.path).update { $0 = [ManagedPreferences.configurationKey: 5, "k": "forced"] }
        let collected = CollectedDiagnostics()
        #expect(throws: SharedFileError.self) { try ManagedPreferences.read(root: root, device: "iPhone", domain: "com.example.app") }
        let defaults = try f.standard()
        #expect(defaults.value(forKey: "k") == nil)
        #expect(collected.contains(.reloadFailed, path))
        // The next administrator's write moves it aside, never overwrites it.
        try manage(f, .set(key: "k", value: "again"))
        let aside = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
        #expect(aside.contains { $0.hasPrefix("com.example.app.plist.corrupt-") })
    }

    @Test func aSymbolicLinkInPlaceOfTheFileIsRefused() throws {
        let f = fixture
        let root = SimulationRoot(path: f.root.path)
        let path = try root.managedPreferencesPath(device: "iPhone", domain: "com.example.app")
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let outside = TemporaryRoot()
        try SharedPlistFile(path: outside.path + "/target.plist").update { $0 = ["k": "outside"] }
        #expect(symlink(outside.path + "/target.plist", path) == 0)
        #expect(throws: (any Error).self) { try ManagedPreferences.read(root: root, device: "iPhone", domain: "com.example.app") }
        #expect(throws: (any Error).self) { try manage(f, .set(key: "k", value: "x")) }
        let defaults = try f.standard()
        #expect(defaults.value(forKey: "k") == nil)
        #expect(try SharedPlistFile.read(path: outside.path + "/target.plist")?["k"] == "outside")
    }
}

/// Changes an observer was told of, in order.
private final class Changes: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [DefaultsChange] = []
    func add(_ change: DefaultsChange) { lock.withLock { items.append(change) } }
    var all: [DefaultsChange] { lock.withLock { items } }
}
