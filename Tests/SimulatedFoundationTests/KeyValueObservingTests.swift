import GroupDefaults
import SimulatedFoundation
import TestSupport
import Testing

/// An observer written as on Apple platforms: an NSObject subclass that
/// overrides `observeValue(forKeyPath:of:change:context:)`.
/// Unchecked Sendable (NSObject hides it from the checker): what it was told is read and changed under its lock.
final class KeyValueRecorder: NSObject, @unchecked Sendable {
    struct Call {
        let keyPath: String?
        let object: Any?
        let change: [NSKeyValueChangeKey: Any]
        let context: UnsafeMutableRawPointer?

        var new: Any? { change[.newKey] }
        var old: Any? { change[.oldKey] }
        var isPrior: Bool { (change[.notificationIsPriorKey] as? NSNumber)?.boolValue == true }
    }

    private let lock = NSLock()
    private var calls: [Call] = []
    private let arrived = DispatchSemaphore(value: 0)

    override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {
        lock.withLock { calls.append(Call(keyPath: keyPath, object: object, change: change ?? [:], context: context)) }
        arrived.signal()
    }

    var all: [Call] { lock.withLock { calls } }

    /// Waits (up to `timeout` seconds) until `count` calls have arrived in total.
    func wait(for count: Int, timeout: TimeInterval = 10) -> Bool {
        while all.count < count {
            if arrived.wait(timeout: .now() + timeout) == .timedOut { return false }
        }
        return true
    }
}

/// An observer that unregisters in its own `deinit`, as Apple's KVO guide
/// has it (and cookpad's `UserDefaults.Observation` does, with a context).
final class SelfRemovingObserver: NSObject {
    let defaults: UserDefaults
    let keyPath: String
    /// nil: removed with `removeObserver(_:forKeyPath:)`.
    let context: UnsafeMutableRawPointer?

    init(_ defaults: UserDefaults, keyPath: String, usesContext: Bool) {
        (self.defaults, self.keyPath) = (defaults, keyPath)
        context = usesContext ? UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1) : nil
        super.init()
        defaults.addObserver(self, forKeyPath: keyPath, options: [.new], context: context)
    }

    override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {}

    deinit {
        if let context {
            defaults.removeObserver(self, forKeyPath: keyPath, context: context)
            context.deallocate()
        } else {
            defaults.removeObserver(self, forKeyPath: keyPath)
        }
    }
}

extension UserDefaults {
    /// Named as its key, as key-value observing on Apple platforms needs (there with `@objc dynamic`).
    var theme: String? { string(forKey: "theme") }
    var fontSize: Int { integer(forKey: "fontSize") }
    /// Reads two keys: a change of either is a change of it.
    var title: String { "\(string(forKey: "name") ?? "?") (\(integer(forKey: "count")))" }
    var nothingStored: Int { 7 }
}

@Suite struct KeyValueObservingTests {
    @Test func anObserverHearsNewAndOldBeforeSetReturns() throws {
        let f = FaceFixture()
        let process = f.process()
        let defaults = GroupSim.defaults(of: process)
        defaults.set("light", forKey: "theme")
        let observer = KeyValueRecorder()
        defaults.addObserver(observer, forKeyPath: "theme", options: [.new, .old], context: nil)
        GroupSim.defaults(of: process).set("dark", forKey: "theme")
        let calls = observer.all
        try #require(calls.count == 1, "told before set returned")
        #expect(calls[0].keyPath == "theme")
        #expect((calls[0].object as AnyObject?) === defaults)
        #expect((calls[0].change[.kindKey] as? NSNumber)?.uintValue == NSKeyValueChange.setting.rawValue)
        #expect(calls[0].new as? String == "dark")
        #expect(calls[0].old as? String == "light")
        #expect(!calls[0].isPrior)

        defaults.removeObject(forKey: "theme")
        #expect(observer.all.count == 2)
        #expect(observer.all.last?.new is NSNull, "an absent value is NSNull, as in Apple's change dictionary")

        defaults.removeObserver(observer, forKeyPath: "theme")
        defaults.set("black", forKey: "theme")
        #expect(observer.all.count == 2, "removed: told nothing more")
    }

    @Test func initialAndPriorAsApple() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.set(1, forKey: "count")
        let observer = KeyValueRecorder()
        defaults.addObserver(observer, forKeyPath: "count", options: [.initial, .new], context: nil)
        try #require(observer.all.count == 1, ".initial: told while being added")
        #expect(observer.all[0].new as? Int == 1)
        #expect(observer.all[0].old == nil)

        let prior = KeyValueRecorder()
        defaults.addObserver(prior, forKeyPath: "count", options: [.prior, .old, .new], context: nil)
        defaults.set(2, forKey: "count")
        let calls = prior.all
        try #require(calls.count == 2)
        #expect(calls[0].isPrior && calls[0].old as? Int == 1 && calls[0].new == nil, "the prior one has the old value only")
        #expect(!calls[1].isPrior && calls[1].old as? Int == 1 && calls[1].new as? Int == 2)
        // Without .new or .old the dictionary has the kind only.
        #expect(observer.all.count == 2 && observer.all[1].old == nil)
        defaults.removeObserver(observer, forKeyPath: "count")
        defaults.removeObserver(prior, forKeyPath: "count")
    }

    /// NSKeyValueObserving.h: "the notification sent as a result of
    /// NSKeyValueObservingOptionInitial will never contain an
    /// NSKeyValueChangeOldKey entry", with `.old` asked or not; a wrapper
    /// tells the initial call from an update by that key.
    @Test func theInitialCallNeverHasAnOldEntry() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.set("light", forKey: "initialTheme")
        let observer = KeyValueRecorder()
        defaults.addObserver(observer, forKeyPath: "initialTheme", options: [.initial, .old, .new], context: nil)
        let absent = KeyValueRecorder()
        defaults.addObserver(absent, forKeyPath: "initialAbsent", options: [.initial, .old], context: nil)
        try #require(observer.all.count == 1 && absent.all.count == 1)
        #expect(observer.all[0].change.keys.contains(.oldKey) == false, "\(observer.all[0].change)")
        #expect(observer.all[0].new as? String == "light")
        #expect(Set(absent.all[0].change.keys) == [.kindKey], "no new asked, no old ever: \(absent.all[0].change)")

        defaults.set("dark", forKey: "initialTheme")
        try #require(observer.all.count == 2)
        #expect(observer.all[1].old as? String == "light", "an update has it")
        defaults.removeObserver(observer, forKeyPath: "initialTheme")
        defaults.removeObserver(absent, forKeyPath: "initialAbsent")
    }

    /// Apple's Key-Value Observing Programming Guide: "A typical pattern is
    /// to register as an observer during the observer's initialization … and
    /// unregister during deallocation (usually in dealloc)". From the
    /// observer's own `deinit` it removes the registration (which lets the
    /// instance go) and is no mistake.
    @Test func anObserverRemovesItselfInItsDeinit() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let process = f.process()
        for usesContext in [false, true] {
            let keyPath = usesContext ? "removedInDeinitWithContext" : "removedInDeinit"
            weak var instance: UserDefaults?
            do {
                let defaults = GroupSim.defaults(of: process)
                instance = defaults
                // Registered in its init, let go at once: its deinit removes the registration.
                _ = SelfRemovingObserver(defaults, keyPath: keyPath, usesContext: usesContext)
            }
            #expect(!collected.contains(.callRefused, "\"\(keyPath)\""), "\(collected.all.map(\.message))")
            #expect(instance == nil, "the registration is gone, and with it the instance it kept (\(keyPath))")
        }
    }

    /// A registration whose observer went away unremoved is not another
    /// object's, even one made later at the same address (the allocator
    /// hands freed memory out again at once): removing that object's
    /// registration, which it never added, is refused.
    @Test func aLaterObjectAtAGoneObserversAddressHasNoRegistration() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        var addresses: Set<ObjectIdentifier> = []
        for _ in 0..<16 {
            let gone = KeyValueRecorder()
            addresses.insert(ObjectIdentifier(gone))
            defaults.addObserver(gone, forKeyPath: "goneObserver", options: [.new], context: nil)
        }
        var (removals, reused) = (0, false)
        while !reused && removals < 64 {
            let stranger = KeyValueRecorder()
            reused = addresses.contains(ObjectIdentifier(stranger))
            defaults.removeObserver(stranger, forKeyPath: "goneObserver")
            removals += 1
        }
        let refused = collected.all.filter { $0.kind == .callRefused && $0.message.contains("\"goneObserver\"") }
        #expect(refused.count == removals, "reused address: \(reused)")
    }

    @Test func theContextIsHandedBackAndChoosesWhatIsRemoved() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let observer = KeyValueRecorder()
        let first = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        let second = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        defer {
            first.deallocate()
            second.deallocate()
        }
        defaults.addObserver(observer, forKeyPath: "k", options: [], context: first)
        defaults.addObserver(observer, forKeyPath: "k", options: [], context: second)
        defaults.set("a", forKey: "k")
        #expect(observer.all.map(\.context) == [first, second])
        defaults.removeObserver(observer, forKeyPath: "k", context: first)
        defaults.set("b", forKey: "k")
        #expect(observer.all.map(\.context) == [first, second, second])
        defaults.removeObserver(observer, forKeyPath: "k", context: second)
        defaults.set("c", forKey: "k")
        #expect(observer.all.count == 3)
    }

    /// As on Apple platforms since iOS 11: an observer that goes away needs
    /// no removal. Its registration kept the instance it was made on, and
    /// lets it go at the next change.
    @Test func anObserverThatIsGoneIsNotToldAndNeedsNoRemoval() throws {
        let f = FaceFixture()
        let process = f.process()
        weak var gone: KeyValueRecorder?
        weak var instance: UserDefaults?
        do {
            let observer = KeyValueRecorder()
            let defaults = GroupSim.defaults(of: process)
            (gone, instance) = (observer, defaults)
            defaults.addObserver(observer, forKeyPath: "k", options: [.new], context: nil)
        }
        #expect(gone == nil, "the registration does not keep the observer")
        #expect(instance != nil, "the registration keeps the instance it was made on")
        GroupSim.defaults(of: process).set("a", forKey: "k")
        #expect(instance == nil, "the observer is gone: so is the registration, and the instance with it")
    }

    /// Registered through a temporary instance, told of another real process's change.
    @Test func aRegistrationThroughATemporaryInstanceHearsAnotherProcess() throws {
        let f = FaceFixture()
        let observer = KeyValueRecorder()
        try #require(GroupSim.defaults(suiteName: f.group, of: f.process())).addObserver(
            observer, forKeyPath: "theme", options: [.new], context: nil)
        let write = try groupsim(["defaults", "write", f.group, "theme", "dark"], root: f.root)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(observer.wait(for: 1))
        #expect(observer.all.first?.new as? String == "dark")
    }

    // MARK: Dotted key paths, as Apple's KVO reads them

    /// A key whose name has a dot is never delivered, from this process or
    /// another (Apple's KVO follows the dot into the value); the registration says why.
    @Test func aKeyNamedWithADotIsNeverDeliveredAndTheRegistrationSaysWhy() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = try #require(GroupSim.defaults(suiteName: f.group, of: f.process()))
        let dotted = KeyValueRecorder()
        defaults.addObserver(dotted, forKeyPath: "sync.theme", options: [.new], context: nil)
        #expect(collected.contains(.keyPathNeverObserved, "a change of a key named 'sync.theme' is never delivered"))
        // Another process's writes are delivered in order: once the marker's arrives, the dotted key's was handled.
        let marker = KeyValueRecorder()
        defaults.addObserver(marker, forKeyPath: "marker", options: [.new], context: nil)
        defaults.set("dark", forKey: "sync.theme")
        for (key, value) in [("sync.theme", "light"), ("marker", "done")] {
            let write = try groupsim(["defaults", "write", f.group, key, value], root: f.root)
            #expect(write.status == 0, "\(write.stderr)")
        }
        #expect(marker.wait(for: 1))
        #expect(marker.all.first?.new as? String == "done")
        #expect(dotted.all.isEmpty, "a key named 'sync.theme' is not the key path sync → theme")
        #expect(defaults.string(forKey: "sync.theme") == "light", "the key itself is stored and read as any other")
    }

    /// The path observes the key before the dot, and reads the rest inside its value.
    @Test func aDottedKeyPathFollowsTheValueOfItsFirstKey() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let observer = KeyValueRecorder()
        defaults.set(["theme": "light"], forKey: "sync")
        defaults.addObserver(observer, forKeyPath: "sync.theme", options: [.initial, .new, .old], context: nil)
        defaults.set(["theme": "dark", "size": 3] as [String: Any], forKey: "sync")
        defaults.set(5, forKey: "sync")
        let calls = observer.all
        try #require(calls.count == 3)
        #expect(calls[0].new as? String == "light", ".initial reads the path now")
        #expect(calls[1].old as? String == "light" && calls[1].new as? String == "dark")
        #expect(calls[2].old as? String == "dark" && calls[2].new is NSNull, "a value that is no dictionary has no 'theme'")
        #expect(calls.allSatisfy { $0.keyPath == "sync.theme" })
    }

    /// A collection operator names no key: registered, reported, never told, and removable.
    @Test func anOperatorPathIsNeverToldButCanBeRemoved() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let observer = KeyValueRecorder()
        defaults.addObserver(observer, forKeyPath: "@count", options: [.new], context: nil)
        #expect(collected.contains(.keyPathNeverObserved, "a key path starting with '@' is a collection operator"))
        defaults.set(1, forKey: "@count")
        #expect(observer.all.isEmpty)
        defaults.removeObserver(observer, forKeyPath: "@count")
        #expect(!collected.contains(.callRefused, "@count"), "the registration existed")
    }

    // MARK: Key paths

    @Test func aKeyPathToAComputedPropertyObservesTheKeyItReads() throws {
        let f = FaceFixture()
        let process = f.process()
        let defaults = GroupSim.defaults(of: process)
        defaults.set("light", forKey: "theme")
        let lock = NSLock()
        var seen: [(old: String??, new: String??, prior: Bool)] = []
        let observation = defaults.observe(\.theme, options: [.initial, .old, .new]) { observed, change in
            #expect(observed === defaults)
            lock.withLock { seen.append((change.oldValue, change.newValue, change.isPrior)) }
        }
        GroupSim.defaults(of: process).set("dark", forKey: "theme")
        var all = lock.withLock { seen }
        try #require(all.count == 2)
        #expect(all[0].old == nil && all[0].new == .some("light"), ".initial: the value now, no old one")
        #expect(all[1].old == .some("light") && all[1].new == .some("dark"))
        observation.invalidate()
        defaults.set("black", forKey: "theme")
        all = lock.withLock { seen }
        #expect(all.count == 2, "invalidated")
    }

    @Test func aKeyPathObservationLivesAsLongAsItsTokenAndHearsOtherProcesses() throws {
        let f = FaceFixture()
        let arrived = DispatchSemaphore(value: 0)
        let values = Received.Lines()
        let observation = try #require(GroupSim.defaults(suiteName: f.group, of: f.process())).observe(\.fontSize, options: [.new]) { _, change in
            values.add("\(change.newValue.map { "\($0)" } ?? "nil")")
            arrived.signal()
        }
        let write = try groupsim(["defaults", "write", f.group, "fontSize", "-int", "14"], root: f.root)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(arrived.wait(timeout: .now() + 10) == .success)
        #expect(values.all == ["14"])
        withExtendedLifetime(observation) {}
    }

    @Test func aPropertyOverSeveralKeysChangesWithEach() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let values = Received.Lines()
        let observation = defaults.observe(\.title, options: [.new]) { _, change in values.add(change.newValue ?? "nil") }
        defaults.set("Notes", forKey: "name")
        defaults.set(3, forKey: "count")
        defaults.set("other", forKey: "unrelated")
        #expect(values.all == ["Notes (0)", "Notes (3)"])
        withExtendedLifetime(observation) {}
    }

    @Test func aPropertyThatReadsNoKeyObservesNothing() throws {
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let values = Received.Lines()
        let observation = defaults.observe(\.nothingStored, options: [.new]) { _, _ in values.add("called") }
        defaults.set(1, forKey: "nothingStored")
        #expect(values.all.isEmpty)
        withExtendedLifetime(observation) {}
    }

    /// Where Apple raises (removing what was never added, an observer that
    /// does not override observeValue), the simulation says so and goes on.
    @Test func mistakesAreReportedNotFatal() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        let observer = KeyValueRecorder()
        defaults.removeObserver(observer, forKeyPath: "never-added-key")
        #expect(collected.contains(.callRefused, "removeObserver(_:forKeyPath: \"never-added-key\")"))

        let plain = NSObject()
        defaults.addObserver(plain, forKeyPath: "unhandled-key", options: [.new], context: nil)
        defaults.set(1, forKey: "unhandled-key")
        #expect(collected.contains(.callRefused, "observes 'unhandled-key' but does not override observeValue"))
        defaults.removeObserver(plain, forKeyPath: "unhandled-key")

        let observation = defaults.observe(\.nothingStored, options: [.new]) { _, _ in }
        #expect(collected.contains(.callRefused, "observe(_:options:changeHandler:) of a Int property observes nothing"))
        withExtendedLifetime(observation) {}
    }
}
