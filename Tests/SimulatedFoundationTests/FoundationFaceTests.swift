import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// A simulated process over a fresh root. Each test makes its own, so none
/// touches the process-wide `SimulatedProcess.current` (ExamplesTests owns it).
struct FaceFixture {
    let root = TemporaryRoot()
    let group = "group.com.example.shared"

    func process(_ bundle: String = "com.example.app", groups: Set<String>? = nil, arguments: [String] = []) -> SimulatedProcess {
        SimulatedProcess(
            identity: ProcessIdentity(root: SimulationRoot(path: root.path), bundleIdentifier: bundle, appGroups: groups ?? [group]),
            launchArguments: arguments)
    }
}

/// What an observer was told, for checks after the fact.
/// Unchecked Sendable: the items are read and changed under `lock`.
final class Received: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [GroupSim.KeyChange] = []
    private let arrived = DispatchSemaphore(value: 0)

    func add(_ change: GroupSim.KeyChange) {
        lock.withLock { items.append(change) }
        arrived.signal()
    }

    var all: [GroupSim.KeyChange] { lock.withLock { items } }

    /// Waits (up to `timeout` seconds) until `count` changes have arrived in total.
    func wait(for count: Int, timeout: TimeInterval = 10) -> Bool {
        while all.count < count {
            if arrived.wait(timeout: .now() + timeout) == .timedOut { return false }
        }
        return true
    }
}

extension Received {
    /// Lines said (diagnostics), kept in order.
    /// Unchecked Sendable: the lines are read and changed under `lock`.
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }
}

/// Counts notifications, and whether each came on the writing thread.
/// Unchecked Sendable: what it counts is read and changed under `lock`.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Bool] = []
    func add(onWritingThread: Bool) { lock.withLock { seen.append(onWritingThread) } }
    var count: Int { lock.withLock { seen.count } }
    var allOnWritingThread: Bool { lock.withLock { seen.allSatisfy { $0 } } }
}

/// Labels of observer calls, in order.
final class Calls: @unchecked Sendable {
    private let lock = NSLock()
    private var labels: [String] = []
    func add(_ label: String) { lock.withLock { labels.append(label) } }
    func take() -> [String] {
        lock.withLock {
            defer { labels = [] }
            return labels
        }
    }
}

@Suite struct FoundationFaceTests {
    @Test func numbersAndBooleansReadAsFoundationBridgesThem() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.set(1, forKey: "one")
        defaults.set(2.0, forKey: "two")
        defaults.set(true, forKey: "yes")
        defaults.set(NSNumber(value: 2.5), forKey: "number")
        defaults.set([1, 2] as [Any], forKey: "list")
        defaults.set(["n": 3] as [String: Any], forKey: "map")
        #expect(defaults.object(forKey: "one") as? Bool == true)
        #expect(defaults.object(forKey: "one") as? Int == 1)
        #expect(defaults.object(forKey: "two") as? Int == 2)
        #expect(defaults.object(forKey: "two") as? Double == 2.0)
        #expect(defaults.object(forKey: "yes") as? Int == 1)
        #expect(defaults.object(forKey: "yes") is NSNumber)
        #expect(defaults.object(forKey: "number") as? Double == 2.5)
        #expect(defaults.object(forKey: "list") as? [Int] == [1, 2])
        #expect(defaults.array(forKey: "list")?.first as? Bool == true)
        #expect(defaults.dictionary(forKey: "map")?["n"] as? Int == 3)
        #expect(defaults.object(forKey: "absent") == nil)
        // Stored with their own types: another reader sees an integer, a real and a boolean.
        #expect(GroupSim.groupDefaults(of: defaults).value(forKey: "one") == .integer(1))
        #expect(GroupSim.groupDefaults(of: defaults).value(forKey: "two") == .real(2))
        #expect(GroupSim.groupDefaults(of: defaults).value(forKey: "yes") == .bool(true))
    }

    @Test func suiteNamesAsApple() throws {
        let f = FaceFixture()
        let process = f.process()
        #expect(GroupSim.defaults(suiteName: "NSGlobalDomain", of: process) == nil)
        #expect(GroupSim.defaults(suiteName: "com.example.app", of: process) == nil)
        let standard = try #require(GroupSim.defaults(suiteName: nil, of: process))
        #expect(GroupSim.groupDefaults(of: standard).domainName == "com.example.app")
        let suite = try #require(GroupSim.defaults(suiteName: f.group, of: process))
        #expect(GroupSim.groupDefaults(of: suite).domainName == f.group)
        // A name built from #file holds '/': Apple accepts it, and so does the simulation.
        let fromFile = try #require(GroupSim.defaults(suiteName: "com.example.test.Tests/FaceTests.testName", of: process))
        fromFile.set("kept", forKey: "k")
        #expect(fromFile.synchronize())
        #expect(fromFile.string(forKey: "k") == "kept")
    }

    @Test func typedSettersAndGetters() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.set(Float(1.5), forKey: "float")
        #expect(defaults.float(forKey: "float") == 1.5)
        #expect(defaults.double(forKey: "float") == 1.5)
        defaults.set("42", forKey: "text")
        #expect(defaults.integer(forKey: "text") == 42)
        defaults.set(7, forKey: "seven")
        #expect(defaults.string(forKey: "seven") == "7")
        #expect(defaults.bool(forKey: "seven"))
        defaults.set(["a", "b"], forKey: "strings")
        #expect(defaults.stringArray(forKey: "strings") == ["a", "b"])
        defaults.set(Data([1, 2]), forKey: "bytes")
        #expect(defaults.data(forKey: "bytes") == Data([1, 2]))

        let web = URL(string: "https://example.com/a?q=1#top")!
        defaults.set(web, forKey: "web")
        #expect(defaults.url(forKey: "web") == web)
        let file = URL(fileURLWithPath: NSHomeDirectory() + "/Documents/notes.txt")
        defaults.set(file, forKey: "file")
        // A file URL is stored as its path with ~, as Apple stores it.
        #expect(defaults.string(forKey: "file") == "~/Documents/notes.txt")
        #expect(defaults.url(forKey: "file")?.path == file.path)
        defaults.set(nil as URL?, forKey: "file")
        #expect(defaults.object(forKey: "file") == nil)
        defaults.set(nil, forKey: "web")
        #expect(defaults.object(forKey: "web") == nil)
        defaults.setValue("via KVC", forKey: "kvc")
        #expect(defaults.value(forKey: "kvc") as? String == "via KVC")
        #expect(defaults.objectIsForced(forKey: "kvc") == false)
    }

    @Test func registeredDefaultsBelongToTheProcess() throws {
        let f = FaceFixture()
        let app = f.process()
        let defaults = GroupSim.defaults(of: app)
        defaults.register(defaults: ["ReadingMode": "standard", "HighScore": 0])
        defaults.register(defaults: ["HighScore": 10])
        #expect(defaults.string(forKey: "ReadingMode") == "standard")
        #expect(defaults.integer(forKey: "HighScore") == 10)
        #expect(GroupSim.defaults(of: app).integer(forKey: "HighScore") == 10, "every instance of the process")
        #expect(GroupSim.defaults(of: f.process()).object(forKey: "HighScore") == nil, "another process does not see them")
        #expect(defaults.dictionaryRepresentation()["HighScore"] as? Int == 10)
        #expect(defaults.volatileDomain(forName: UserDefaults.registrationDomain)["ReadingMode"] as? String == "standard")
        #expect(defaults.persistentDomain(forName: "com.example.app") == nil, "registration is never stored")
    }

    @Test func domainsAsApple() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process(arguments: ["-theme", "dark", "-verbose", "-count", "<integer>3</integer>"]))
        #expect(UserDefaults.globalDomain == "NSGlobalDomain")
        #expect(UserDefaults.argumentDomain == "NSArgumentDomain")
        #expect(UserDefaults.registrationDomain == "NSRegistrationDomain")
        #expect(defaults.string(forKey: "theme") == "dark")
        #expect(defaults.object(forKey: "count") as? Int == 3)
        #expect(defaults.object(forKey: "verbose") == nil)
        #expect(defaults.volatileDomain(forName: UserDefaults.argumentDomain).keys.sorted() == ["count", "theme"])

        #expect(defaults.persistentDomain(forName: "com.example.missing") == nil)
        defaults.setPersistentDomain(["k": 1], forName: "com.example.other")
        #expect(defaults.persistentDomain(forName: "com.example.other")?["k"] as? Int == 1)
        defaults.removePersistentDomain(forName: "com.example.other")
        #expect(defaults.persistentDomain(forName: "com.example.other") == nil)

        defaults.setVolatileDomain(["v": "volatile"], forName: "MyVolatile")
        #expect(defaults.volatileDomainNames.contains("MyVolatile"))
        #expect(defaults.volatileDomain(forName: "MyVolatile")["v"] as? String == "volatile")
        #expect(defaults.persistentDomain(forName: "MyVolatile") == nil)
        defaults.removeVolatileDomain(forName: "MyVolatile")
        #expect(!defaults.volatileDomainNames.contains("MyVolatile"))
    }

    @Test func theSuiteAddedLastIsSearchedFirst() throws {
        let f = FaceFixture()
        let process = f.process(groups: ["group.com.example.first", "group.com.example.second"])
        try #require(GroupSim.defaults(suiteName: "group.com.example.first", of: process)).set("first", forKey: "k")
        try #require(GroupSim.defaults(suiteName: "group.com.example.second", of: process)).set("second", forKey: "k")
        let combined = GroupSim.defaults(of: process)
        combined.addSuite(named: "group.com.example.first")
        combined.addSuite(named: "group.com.example.second")
        #expect(combined.string(forKey: "k") == "second")
        combined.set("own", forKey: "k")
        #expect(combined.string(forKey: "k") == "own")
        combined.removeObject(forKey: "k")
        combined.removeSuite(named: "group.com.example.second")
        #expect(combined.string(forKey: "k") == "first")
    }

    @Test func didChangeIsPostedOnTheWritingThreadWithApplesName() throws {
        #expect(UserDefaults.didChangeNotification.rawValue == "NSUserDefaultsDidChangeNotification")
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let posted = Counter()
        let writer = pthread_self()
        let token = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: defaults, queue: nil) { _ in
            posted.add(onWritingThread: pthread_equal(pthread_self(), writer) != 0)
        }
        defer { NotificationCenter.default.removeObserver(token) }
        defaults.set("v", forKey: "k")
        #expect(posted.count == 1, "posted before set returned")
        defaults.removeObject(forKey: "k")
        defaults.register(defaults: ["r": 1])
        #expect(posted.count == 3)
        #expect(posted.allOnWritingThread)
    }

    /// A key set through the face posts the face's notification once, not
    /// also `GroupDefaults`' own (each post costs about as much as the set).
    @Test func aSetThroughTheFacePostsOneNotification() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let facePosts = Counter()
        let groupPosts = Counter()
        let tokens = [
            NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: defaults, queue: nil) { _ in
                facePosts.add(onWritingThread: true)
            },
            NotificationCenter.default.addObserver(
                forName: GroupDefaults.didChangeNotification, object: GroupSim.groupDefaults(of: defaults), queue: nil
            ) { _ in
                groupPosts.add(onWritingThread: true)
            },
        ]
        defer { for token in tokens { NotificationCenter.default.removeObserver(token) } }
        defaults.set("v", forKey: "k")
        defaults.set(3, forKey: "n")
        defaults.set(URL(fileURLWithPath: "/tmp/x"), forKey: "u")
        defaults.removeObject(forKey: "k")
        #expect(facePosts.count == 4)
        #expect(groupPosts.count == 0)
        // Through GroupDefaults itself, its own notification is posted.
        GroupSim.groupDefaults(of: defaults).set("w", forKey: "k")
        #expect(groupPosts.count == 1)
        #expect(facePosts.count == 4)
    }

    /// A set reaches every observer a post of `didChangeNotification` with
    /// the instance reaches (by name or any name, for the instance or any
    /// object), in the same order, with the same name and object, on the
    /// setting thread; an observer of another instance is not called.
    @Test func aSetNotifiesTheObserversAPostWouldInItsOrder() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let other = GroupSim.defaults(of: f.process())
        let calls = Calls()
        let writer = pthread_self()
        let observers: [(String, Notification.Name?, AnyObject?)] = [
            ("name, any object", UserDefaults.didChangeNotification, nil), ("any name, instance", nil, defaults),
            ("name, instance", UserDefaults.didChangeNotification, defaults), ("any name, any object", nil, nil),
            ("name, other instance", UserDefaults.didChangeNotification, other),
        ]
        let tokens = observers.map { label, name, object in
            NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { note in
                // Other tests post too: only this instance's notifications count.
                guard (note.object as AnyObject?) === defaults else { return }
                let named = note.name == UserDefaults.didChangeNotification
                calls.add("\(label)\(named ? "" : " (wrong name)")\(pthread_equal(pthread_self(), writer) != 0 ? "" : " (other thread)")")
            }
        }
        defer { for token in tokens { NotificationCenter.default.removeObserver(token) } }
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: defaults)
        let posted = calls.take()
        #expect(posted.count == 4)
        defaults.set("a string", forKey: "k")
        #expect(calls.take() == posted)
        #expect(defaults.string(forKey: "k") == "a string")
    }

    @Test func observersHearThisProcessBeforeSetReturnsAndOnlyAfterTheyStart() throws {
        let f = FaceFixture()
        let process = f.process(arguments: ["-hidden", "argument"])
        let defaults = GroupSim.defaults(of: process)
        defaults.set("before", forKey: "theme")
        let received = Received()
        let observation = GroupSim.observe(defaults, "theme") { received.add($0) }
        let hidden = GroupSim.observe(defaults, "hidden") { received.add($0) }
        #expect(received.all.isEmpty)
        // Through another instance of the process: still before set returns.
        GroupSim.defaults(of: process).set("dark", forKey: "theme")
        #expect(received.all.count == 1)
        #expect(received.all.first?.oldValue as? String == "before")
        #expect(received.all.first?.newValue as? String == "dark")
        #expect(received.all.first?.isFromAnotherProcess == false)
        defaults.set("dark", forKey: "theme")
        defaults.set("stored", forKey: "hidden")
        #expect(received.all.count == 1, "same value, and a value the argument hides, tell nobody")
        observation.invalidate()
        defaults.set("light", forKey: "theme")
        #expect(received.all.count == 1)
        withExtendedLifetime(hidden) {}
    }

    /// Another real process writes; the observer hears each effective change
    /// once, and nothing for a same-value write or a hidden key.
    @Test func observersHearOtherProcesses() throws {
        let f = FaceFixture()
        let defaults = try #require(GroupSim.defaults(suiteName: f.group, of: f.process(arguments: ["-hidden", "argument"])))
        let theme = Received()
        let hidden = Received()
        let marker = Received()
        let observations = [
            GroupSim.observe(defaults, "theme") { theme.add($0) }, GroupSim.observe(defaults, "hidden") { hidden.add($0) },
            GroupSim.observe(defaults, "marker") { marker.add($0) },
        ]
        let write = { (key: String, value: String) in
            let result = try groupsim(["defaults", "write", f.group, key, value], root: f.root)
            #expect(result.status == 0, "\(result.stderr)")
        }
        try write("theme", "dark")
        #expect(theme.wait(for: 1))
        #expect(theme.all.first?.newValue as? String == "dark")
        #expect(theme.all.first?.isFromAnotherProcess == true)
        try write("theme", "dark")
        try write("hidden", "stored")
        try write("marker", "1")
        #expect(marker.wait(for: 1))
        #expect(theme.all.count == 1)
        #expect(hidden.all.isEmpty)
        #expect(defaults.string(forKey: "theme") == "dark")
        withExtendedLifetime(observations) {}
    }
}
