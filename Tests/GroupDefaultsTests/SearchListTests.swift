import Foundation
import PropertyList
import TestSupport
import Testing

@testable import GroupDefaults

/// One simulated process's view: its own volatile domains over a fresh root.
struct Fixture {
    let root = TemporaryRoot()
    let process = ProcessDomains()
    let group = "group.com.example.shared"

    func context(_ bundle: String = "com.example.app", groups: Set<String>? = ["group.com.example.shared"]) -> DefaultsContext {
        DefaultsContext(root: SimulationRoot(path: root.path), device: "iPhone", bundleIdentifier: bundle, appGroups: groups)
    }

    func standard(_ bundle: String = "com.example.app") throws -> GroupDefaults {
        try GroupDefaults(context: context(bundle), processDomains: process)
    }

    func suite(_ bundle: String = "com.example.app", groups: Set<String>? = ["group.com.example.shared"]) throws -> GroupDefaults {
        try GroupDefaults(suiteName: group, context: context(bundle, groups: groups), processDomains: process)
    }
}

@Suite struct SearchListTests {
    /// Lives as long as the test: a `Fixture()` used inline would remove its root at once.
    let fixture = Fixture()

    @Test func theOrderIsArgumentsOwnSuitesGlobalRegistration() throws {
        let f = Fixture()
        let defaults = try f.standard()
        try defaults.addSuite(named: f.group)
        #expect(
            defaults.searchList == [
                "NSArgumentDomain", "com.example.app", f.group, "NSGlobalDomain", "NSLanguagesDomain", "NSRegistrationDomain",
            ])

        f.process.register(["k": "registered"])
        #expect(defaults.lookup("k")?.domain == "NSRegistrationDomain")
        try defaults.setPersistentDomain(["k": "global"], forName: "NSGlobalDomain")
        #expect(defaults.lookup("k")! == (.string("global"), "NSGlobalDomain"))
        try f.suite().set("suite", forKey: "k")
        #expect(defaults.lookup("k")! == (.string("suite"), f.group))
        defaults.set("own", forKey: "k")
        #expect(defaults.lookup("k")! == (.string("own"), "com.example.app"))
        f.process.setLaunchArguments(["-k", "argument"])
        #expect(defaults.lookup("k")! == (.string("argument"), "NSArgumentDomain"))
    }

    @Test func theSuiteAddedLastIsSearchedFirst() throws {
        let f = Fixture()
        let defaults = try f.standard()
        try f.suite().set("group", forKey: "k")
        let other = try GroupDefaults(suiteName: "com.example.other", context: f.context(), processDomains: f.process)
        other.set("other", forKey: "k")
        try defaults.addSuite(named: f.group)
        try defaults.addSuite(named: "com.example.other")
        #expect(Array(defaults.searchList[1...3]) == ["com.example.app", "com.example.other", f.group])
        #expect(defaults.lookup("k")! == (.string("other"), "com.example.other"))
        // Adding a suite that is already there does not move it.
        try defaults.addSuite(named: f.group)
        #expect(defaults.lookup("k")?.domain == "com.example.other")
        defaults.removeSuite(named: "com.example.other")
        #expect(defaults.lookup("k")! == (.string("group"), f.group))
    }

    @Test func removingRevealsTheLowerDomain() throws {
        let f = Fixture()
        let defaults = try f.standard()
        f.process.register(["theme": "light"])
        defaults.set("dark", forKey: "theme")
        #expect(defaults.string(forKey: "theme") == "dark")
        defaults.removeObject(forKey: "theme")
        #expect(defaults.string(forKey: "theme") == "light")
    }

    @Test func anArgumentOverridesWithoutPersisting() throws {
        let f = Fixture()
        let defaults = try f.standard()
        defaults.set(.integer(1), forKey: "n")
        try defaults.flush()
        f.process.setLaunchArguments(["-n", "5"])
        #expect(defaults.integer(forKey: "n") == 5)
        defaults.set(.integer(2), forKey: "n")
        #expect(defaults.integer(forKey: "n") == 5)
        try defaults.flush()
        f.process.setLaunchArguments([])
        #expect(defaults.integer(forKey: "n") == 2)
        #expect(try SharedPlistFileContents.read(f.root.appDomainPath("com.example.app"))["n"] == .integer(2))
    }

    @Test func writesGoToTheOwnDomainOnly() throws {
        let f = Fixture()
        let defaults = try f.standard()
        try defaults.addSuite(named: f.group)
        defaults.set("x", forKey: "k")
        try defaults.flush()
        #expect(try f.suite().value(forKey: "k") == nil)
        #expect(try defaults.persistentDomain(forName: "com.example.app") == ["k": "x"])
    }

    @Test func boolOfAMissingKeyIsFalseButObjectTellsAbsent() throws {
        let defaults = try fixture.standard()
        #expect(defaults.bool(forKey: "missing") == false)
        #expect(defaults.object(forKey: "missing") == nil)
        defaults.set(false, forKey: "present")
        #expect(defaults.object(forKey: "present") as? Bool == false)
    }

    @Test func dictionaryRepresentationMergesInSearchOrder() throws {
        let f = Fixture()
        let defaults = try f.standard()
        f.process.register(["a": "registered", "b": "registered"])
        defaults.set("own", forKey: "b")
        let all = defaults.dictionaryRepresentation()
        #expect(all["a"] == "registered")
        #expect(all["b"] == "own")
        #expect(all["AppleLanguages"] == ["en"])
    }

    @Test func typedReads() throws {
        let defaults = try fixture.standard()
        defaults.set(["a", "b"], forKey: "strings")
        defaults.set(["a", 1], forKey: "mixed")
        #expect(defaults.stringArray(forKey: "strings") == ["a", "b"])
        #expect(defaults.stringArray(forKey: "mixed") == nil)
        #expect(defaults.array(forKey: "mixed")?.count == 2)
        defaults.set(url: URL(string: "https://example.com/?q=1#top"), forKey: "url")
        #expect(defaults.url(forKey: "url") == URL(string: "https://example.com/?q=1#top"))
        try defaults.set(any: ["n": 1, "d": 2.5, "flag": true] as [String: Any], forKey: "dict")
        #expect(defaults.dictionary(forKey: "dict") == ["n": 1, "d": 2.5, "flag": true])
        #expect(defaults.float(forKey: "missing") == 0)
    }
}

@Suite struct RefusalTests {
    /// Lives as long as the test: a `Fixture()` used inline would remove its root at once.
    let fixture = Fixture()

    @Test func suitesThatAreNotSuites() throws {
        let f = Fixture()
        #expect(throws: DefaultsError.self) { try GroupDefaults(suiteName: "NSGlobalDomain", context: f.context(), processDomains: f.process) }
        #expect(throws: DefaultsError.self) { try GroupDefaults(suiteName: "com.example.app", context: f.context(), processDomains: f.process) }
        let defaults = try f.standard()
        #expect(throws: DefaultsError.self) { try defaults.addSuite(named: "NSGlobalDomain") }
        #expect(throws: DefaultsError.self) { try defaults.addSuite(named: "com.example.app") }
    }

    @Test func volatileDomainsAreNotPersistent() throws {
        let defaults = try fixture.standard()
        #expect(try defaults.persistentDomain(forName: "NSRegistrationDomain") == nil)
        #expect(try defaults.persistentDomain(forName: "NSArgumentDomain") == nil)
        #expect(throws: DefaultsError.self) { try defaults.setPersistentDomain([:], forName: "NSArgumentDomain") }
        #expect(throws: DefaultsError.self) { try defaults.setPersistentDomain([:], forName: "NSRegistrationDomain") }
        #expect(throws: DefaultsError.self) { try defaults.setVolatileDomain([:], forName: "NSRegistrationDomain") }
    }

    @Test func namesThatCannotBeFiles() throws {
        let f = Fixture()
        let tooLong = String(repeating: "a", count: 199) + "/"
        for name in ["", tooLong] {
            #expect(throws: DefaultsError.self, "\(name)") {
                try GroupDefaults(suiteName: name, context: f.context(), processDomains: f.process)
            }
        }
    }

    /// A name that cannot be shown on one line, or came from bytes that are
    /// not UTF-8, is refused with the character and where it is.
    @Test func suiteNamesWithControlCharactersAreRefused() throws {
        let f = Fixture()
        for (name, problem) in [("x\0y", "NUL"), ("a\nb", "U+000A at character 2"), ("bad\u{FFFD}", "U+FFFD at character 4")] {
            #expect(throws: DefaultsError.self, "\(name)") {
                try GroupDefaults(suiteName: name, context: f.context(), processDomains: f.process)
            }
            do { _ = try GroupDefaults(suiteName: name, context: f.context(), processDomains: f.process) } catch {
                #expect("\(error)".contains(problem), "\(error)")
            }
        }
    }

    /// Apple accepts any suite name; each is stored in its own file inside
    /// the app's Preferences folder, whatever '/' or '..' it holds.
    @Test func anySuiteNameStaysInsideItsFolder() throws {
        let f = Fixture()
        let names = [
            "com.example.test.Module/File.testName", "a/b", "../../escape", "..", ".hidden", "%2F", "a..b", "a%b", ".\u{301}x",
        ]
        let folder = (f.root.appDomainPath("com.example.app") as NSString).deletingLastPathComponent
        var paths = Set<String>()
        for name in names {
            let suite = try GroupDefaults(suiteName: name, context: f.context(), processDomains: f.process)
            suite.set(.string(name), forKey: "name")
            try suite.flush()
            #expect((suite.path as NSString).deletingLastPathComponent == folder, "\(name)")
            let fileName = (suite.path as NSString).lastPathComponent
            #expect(!fileName.hasPrefix(".") && !fileName.contains("..") && !fileName.contains("/"), "\(fileName)")
            #expect(try SharedPlistFileContents.read(suite.path)["name"] == .string(name))
            #expect(DomainName.domain(fromFileStem: String(fileName.dropLast(".plist".count))) == name)
            paths.insert(suite.path)
        }
        #expect(paths.count == names.count)
        // Nothing was written outside the folder.
        let root = try FileManager.default.subpathsOfDirectory(atPath: f.root.path).filter { $0.hasSuffix(".plist") }
        #expect(root.count == names.count)
        // The defaults tool lists them by their names.
        let listed = try DomainFiles(root: SimulationRoot(path: f.root.path), device: "iPhone", app: "com.example.app").allDomains()
        #expect(Set(listed) == Set(names))
    }

    @Test func fileStemsThatNoNameMakesAreNotDomains() {
        for stem in ["%2", "%zz", "a%2Fb%", "%2e", "%41", ".x", "a..b"] {
            #expect(DomainName.domain(fromFileStem: stem) == nil, "\(stem)")
        }
        #expect(DomainName.domain(fromFileStem: "com.example.app") == "com.example.app")
    }

    @Test func aDomainThatDoesNotExistIsNil() throws {
        let f = Fixture()
        let defaults = try f.standard()
        #expect(try defaults.persistentDomain(forName: "com.example.never-used") == nil)
        #expect(!FileManager.default.fileExists(atPath: f.root.appDomainPath("com.example.app", domain: "com.example.never-used")))
        // A suite written through another instance of this process, not yet on disk.
        let suite = try GroupDefaults(suiteName: "com.example.written", context: f.context(), processDomains: f.process)
        suite.set("v", forKey: "k")
        #expect(try defaults.persistentDomain(forName: "com.example.written") == ["k": "v"])
        try defaults.removePersistentDomain(forName: "com.example.written")
        #expect(try defaults.persistentDomain(forName: "com.example.written") == nil)
        // Set through a domain object nobody keeps: its save is finished before the read.
        for round in 0..<20 {
            try defaults.setPersistentDomain(["round": .integer(Int64(round))], forName: "com.example.released")
            #expect(try defaults.persistentDomain(forName: "com.example.released") == ["round": .integer(Int64(round))])
        }
        // A domain only on disk (written by another process, not open in this one).
        try DomainFiles(root: SimulationRoot(path: f.root.path), device: "iPhone", app: "com.example.app").update("com.example.on-disk") {
            $0["k"] = "disk"
        }
        #expect(try defaults.persistentDomain(forName: "com.example.on-disk") == ["k": "disk"])
    }

    @Test func customVolatileDomainsAreKept() throws {
        let defaults = try fixture.standard()
        try defaults.setVolatileDomain(["k": "v"], forName: "MyVolatile")
        #expect(defaults.volatileDomain(forName: "MyVolatile") == ["k": "v"])
        #expect(defaults.volatileDomainNames.contains("MyVolatile"))
        #expect(try defaults.persistentDomain(forName: "MyVolatile") == nil)
        defaults.removeVolatileDomain(forName: "MyVolatile")
        #expect(!defaults.volatileDomainNames.contains("MyVolatile"))
    }

    @Test func notAPropertyListNamesTheKey() throws {
        struct Opaque {}
        let defaults = try fixture.standard()
        do {
            try defaults.set(any: ["inner": Opaque()] as [String: Any], forKey: "bad")
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("bad.inner"))
            #expect("\(error)".contains("Opaque"))
        }
        #expect(defaults.object(forKey: "bad") == nil)
    }
}

/// Reads a plist file the way another program would.
enum SharedPlistFileContents {
    static func read(_ path: String) throws -> [String: PlistValue] {
        try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: path)))
    }
}
