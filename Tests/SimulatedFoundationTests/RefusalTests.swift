import GroupDefaults
import PropertyList
import SimulatedFoundation
import TestSupport
import Testing

/// Where Foundation raises an exception, the simulated UserDefaults changes
/// nothing and says so through Diagnostics.
@Suite(.serialized) struct RefusedCallTests {
    struct Opaque {}

    @Test func aValueThatIsNotAPropertyListChangesNothing() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.set("kept", forKey: "refused-key")
        defaults.set(Opaque(), forKey: "refused-key")
        #expect(defaults.string(forKey: "refused-key") == "kept")
        #expect(collected.contains(.callRefused, "\"refused-key\""))
        #expect(collected.contains(.callRefused, "Opaque"))

        defaults.set(["inner": Opaque()] as [String: Any], forKey: "nested-key")
        #expect(defaults.object(forKey: "nested-key") == nil)
        #expect(collected.contains(.callRefused, "nested-key.inner"))

        defaults.set(UInt64.max, forKey: "huge-key")
        #expect(defaults.object(forKey: "huge-key") == nil)
        #expect(collected.contains(.callRefused, "18446744073709551615"))
        defaults.set(UInt16(7), forKey: "small-key")
        #expect(defaults.integer(forKey: "small-key") == 7)
    }

    @Test func anOptionalInsideAnyIsItsValueAndNilIsRefused() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        func store<T>(_ value: T, _ key: String) { defaults.set(value, forKey: key) }
        store(Optional("wrapped"), "optional-some")
        #expect(defaults.string(forKey: "optional-some") == "wrapped")
        store(["a", nil] as [String?], "optional-array")
        #expect(defaults.object(forKey: "optional-array") == nil)
        #expect(collected.contains(.callRefused, "optional-array[1]"))
    }

    @Test func registerWithABadValueRegistersNothing() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.register(defaults: ["good-registered": 1, "bad-registered": Opaque()])
        #expect(defaults.object(forKey: "good-registered") == nil)
        #expect(collected.contains(.callRefused, "register(defaults:)"))
    }

    @Test func domainsAndSuitesAppleRefuses() throws {
        let collected = CollectedDiagnostics()
        let f = FaceFixture()
        let defaults = GroupSim.defaults(of: f.process())
        defaults.setPersistentDomain(["k": 1], forName: UserDefaults.registrationDomain)
        #expect(defaults.volatileDomain(forName: UserDefaults.registrationDomain).isEmpty)
        #expect(collected.contains(.callRefused, "setPersistentDomain(_:forName: \"NSRegistrationDomain\")"))
        defaults.setVolatileDomain(["k": 1], forName: UserDefaults.argumentDomain)
        #expect(collected.contains(.callRefused, "setVolatileDomain(_:forName: \"NSArgumentDomain\")"))
        defaults.addSuite(named: "com.example.app")
        defaults.addSuite(named: UserDefaults.globalDomain)
        #expect(collected.contains(.callRefused, "addSuite(named: \"com.example.app\")"))
        #expect(collected.contains(.callRefused, "addSuite(named: \"NSGlobalDomain\")"))
        #expect(GroupSim.defaults(suiteName: "", of: f.process()) == nil)
        #expect(collected.contains(.callRefused, "UserDefaults(suiteName: \"\") is nil"))
    }
}

@Suite struct ProcessIdentityTests {
    static func identity(_ environment: [String: String], executable: String = "/usr/local/bin/my-tool") -> (ProcessIdentity, [Diagnostic]) {
        var reports: [Diagnostic] = []
        let identity = ProcessIdentity.fromEnvironment(environment, executablePath: executable) { reports.append($0) }
        return (identity, reports)
    }

    @Test func theEnvironmentNamesTheProcess() {
        let (identity, reports) = Self.identity([
            "GROUPSIM_ROOT": "/tmp/sim", "GROUPSIM_DEVICE": "iPad", "GROUPSIM_BUNDLE_ID": "com.example.notes.widget",
            "GROUPSIM_APP_GROUPS": "group.com.example.notes, group.com.example.other,",
        ])
        #expect(identity.root.path == "/tmp/sim")
        #expect(identity.device == "iPad")
        #expect(identity.bundleIdentifier == "com.example.notes.widget")
        #expect(identity.appGroups == ["group.com.example.notes", "group.com.example.other"])
        #expect(reports.isEmpty)
        #expect(ProcessIdentity.fromEnvironment(identity.environment, executablePath: "x") { _ in } == identity)
    }

    @Test func withoutVariablesATool() {
        let (identity, reports) = Self.identity(["HOME": "/home/someone"])
        #expect(identity.bundleIdentifier == "my-tool", "a command-line tool's domain is its name")
        #expect(identity.device == "iPhone")
        #expect(identity.appGroups.isEmpty)
        #expect(identity.root.path == "/home/someone/.local/share/groupsim")
        #expect(reports.isEmpty)
    }

    @Test func unusableValuesAreReportedAndReplaced() {
        let (identity, reports) = Self.identity([
            "GROUPSIM_ROOT": "/tmp/sim", "GROUPSIM_DEVICE": "../escape", "GROUPSIM_BUNDLE_ID": "com.example/app",
            "GROUPSIM_APP_GROUPS": "group.ok,not-a-group,group.../x",
        ])
        #expect(identity.device == "iPhone")
        #expect(identity.bundleIdentifier == ProcessIdentity.fallbackBundleIdentifier)
        #expect(identity.appGroups == ["group.ok"])
        #expect(reports.count == 4)
        #expect(reports.allSatisfy { $0.kind == .invalidEnvironment })
        #expect(reports.contains { $0.message.contains("GROUPSIM_DEVICE") && $0.message.contains("../escape") })
        #expect(reports.contains { $0.message.contains("not-a-group") })
    }
}
