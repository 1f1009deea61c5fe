import Foundation
import PropertyList
import TestSupport
import Testing

@testable import GroupDefaults

enum Theme: String, DefaultsStorable { case light, dark }

struct ReaderSettings: DefaultsCodable, Equatable {
    var fontSize = 14
    var serif = true
    var tags: [String] = []
}

extension DefaultsKeys {
    static let theme = DefaultsKey<Theme>("theme", default: .light)
    static let highScore = DefaultsKey<Int>("highScore", default: 0)
    static let reader = DefaultsKey<ReaderSettings>("reader", default: ReaderSettings())
    static let nickname = DefaultsKey<String?>("nickname", default: nil)
}

@Suite struct TypedKeyTests {
    /// Lives as long as the test: a `Fixture()` used inline would remove its root at once.
    let fixture = Fixture()

    @Test func enumsStoreTheirRawValue() throws {
        let defaults = try fixture.standard()
        #expect(defaults[DefaultsKeys.theme] == .light)
        defaults[DefaultsKeys.theme] = .dark
        #expect(defaults[DefaultsKeys.theme] == .dark)
        #expect(defaults.value(forKey: "theme") == "dark")
    }

    @Test func aWrongTypeFallsBackToTheDefault() throws {
        let defaults = try fixture.standard()
        defaults.set("purple", forKey: "theme")
        #expect(defaults[DefaultsKeys.theme] == .light)
    }

    @Test func codableValuesAreStoredAsReadableDictionaries() throws {
        let f = Fixture()
        let defaults = try f.suite()
        let settings = ReaderSettings(fontSize: 18, serif: false, tags: ["a"])
        defaults[DefaultsKeys.reader] = settings
        try defaults.flush()
        #expect(defaults[DefaultsKeys.reader] == settings)
        let onDisk = try SharedPlistFileContents.read(f.root.groupSuitePath(f.group))
        #expect(onDisk["reader"] == ["fontSize": 18, "serif": false, "tags": ["a"]])
    }

    @Test func registeringPutsDefaultsInTheRegistrationDomain() throws {
        let f = Fixture()
        let defaults = try f.standard()
        try defaults.register(DefaultsKeys.highScore, DefaultsKeys.theme, DefaultsKeys.nickname)
        #expect(defaults.lookup("highScore")! == (.integer(0), "NSRegistrationDomain"))
        #expect(defaults.lookup("theme")?.value == "light")
        #expect(defaults.lookup("nickname") == nil)
        defaults[DefaultsKeys.highScore] = 10
        defaults.reset(DefaultsKeys.highScore)
        #expect(defaults.lookup("highScore")?.domain == "NSRegistrationDomain")
    }

    @Test func optionalsRemoveOnNil() throws {
        let defaults = try fixture.standard()
        defaults[DefaultsKeys.nickname] = "ace"
        #expect(defaults[DefaultsKeys.nickname] == "ace")
        defaults[DefaultsKeys.nickname] = nil
        #expect(defaults.object(forKey: "nickname") == nil)
    }
}

@Suite struct TransactionTests {
    @Test func incrementAndAppendCommitAtomically() throws {
        let f = Fixture()
        let defaults = try f.suite()
        #expect(try defaults.increment("count", by: 2) == 2)
        #expect(try defaults.increment("count", by: 3) == 5)
        try defaults.transaction { $0["list"] = .array(($0["list"]?.arrayValue ?? []) + ["x"]) }
        let onDisk = try SharedPlistFileContents.read(f.root.groupSuitePath(f.group))
        #expect(onDisk["count"] == 5)
        #expect(onDisk["list"] == ["x"])
    }

    @Test func pendingWritesAreCommittedBeforeATransaction() throws {
        let f = Fixture()
        let defaults = try f.suite()
        defaults.set("first", forKey: "a")
        try defaults.transaction { contents in #expect(contents["a"] == "first") }
    }

    @Test func aThrowingTransactionWritesNothing() throws {
        struct Refused: Error {}
        let f = Fixture()
        let defaults = try f.suite()
        defaults.set(1, forKey: "kept")
        try defaults.flush()
        let path = f.root.groupSuitePath(f.group)
        let fileBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: Refused.self) {
            try defaults.transaction { contents in
                contents["lost"] = 1
                throw Refused()
            }
        }
        // The file is byte for byte what it was, and the process's view too.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == fileBefore)
        #expect(defaults.value(forKey: "lost") == nil)
        #expect(defaults.value(forKey: "kept") == 1)
        try defaults.flush()
        #expect(try SharedPlistFileContents.read(path) == ["kept": 1])
    }
}

@Suite struct AsyncObservationTests {
    @Test(.timeLimit(.minutes(1))) func changesArriveAsAnAsyncSequence() async throws {
        let f = Fixture()
        let defaults = try f.suite()
        let stream = defaults.updates(DefaultsKeys.theme)
        let writer = Task(priority: .high) {  // not queued behind the tests waiting for the .medium pool (CONTRIBUTING.md)
            defaults[DefaultsKeys.theme] = .dark
            defaults[DefaultsKeys.theme] = .light
        }
        var seen: [Theme] = []
        for await theme in stream {
            seen.append(theme)
            if seen.count == 2 { break }
        }
        await writer.value
        #expect(seen == [.dark, .light])
    }
}

@Suite struct ReadModifyWriteTests {
    /// Lives as long as the test: a `Fixture()` used inline would remove its root at once.
    let fixture = Fixture()

    @Test func incrementRefusesWhatIsNotAWholeNumber() throws {
        let defaults = try fixture.suite()
        for (value, ok) in [
            (PlistValue.real(1e30), false), (.real(.nan), false), (.string("hello"), false), (.array([]), false),
            (.real(4.0), true), (.string(" 7"), true), (.bool(true), true),
        ] {
            defaults.set(value, forKey: "n")
            if ok {
                #expect(throws: Never.self) { try defaults.increment("n") }
            } else {
                #expect(throws: DefaultsError.self, "\(value)") { try defaults.increment("n") }
                if case .real(let d) = value, d.isNaN { continue }  // NaN never equals itself
                #expect(defaults.value(forKey: "n") == value, "a refused increment changes nothing")
            }
        }
        defaults.set(.integer(Int64.max), forKey: "n")
        #expect(throws: DefaultsError.overflow(key: "n", current: Int64.max, delta: 1)) { try defaults.increment("n") }
    }

    @Test func aNestedTransactionIsRefusedNotADeadlock() throws {
        let defaults = try fixture.suite()
        #expect(throws: DefaultsError.self) {
            try defaults.transaction { _ in try defaults.increment("n") }
        }
        #expect(throws: DefaultsError.self) {
            try defaults.transaction { _ in try defaults.flush() }
        }
        #expect(try defaults.increment("n") == 1)
    }

    @Test func aTransactionInsideAnotherDomainsTransactionIsRefused() throws {
        let f = Fixture()
        let suite = try f.suite()
        let standard = try f.standard()
        // Two domains' locks held at once could deadlock with a process taking them in the other order.
        #expect(throws: DefaultsError.transactionInsideAnotherDomain(domain: "com.example.app")) {
            try suite.transaction { _ in try standard.increment("n") }
        }
        #expect(throws: DefaultsError.transactionInsideAnotherDomain(domain: "com.example.app")) {
            try suite.transaction { _ in try standard.flush() }
        }
        // Setting a value of the other domain is fine: it commits afterwards.
        try suite.transaction { _ in standard.set(1, forKey: "n") }
        try standard.flush()
        #expect(try SharedPlistFileContents.read(f.root.appDomainPath("com.example.app"))["n"] == 1)
    }
}
