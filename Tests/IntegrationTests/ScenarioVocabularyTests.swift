import Foundation
import Testing
import TestSupport

/// Each thing a scenario can say is shown twice: a scenario that passes, and
/// the same scenario changed so that it must fail, with the reason reported.
@Suite struct ScenarioVocabularyTests {
    let folder = TemporaryRoot()

    func run(_ name: String, _ yaml: String) throws -> ProcessResult {
        let path = folder.path + "/\(name).yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        return try runBounded(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
    }

    func passes(_ name: String, _ yaml: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try run(name, yaml)
        #expect(result.status == 0, "\(name): \(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
    }

    func fails(_ name: String, _ yaml: String, saying reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try run(name, yaml)
        #expect(result.status == 1, "\(name) should fail: \(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains(reason), "\(name): \(result.stdout)", sourceLocation: sourceLocation)
    }

    static let processes = "processes:\n  app: { role: main-app }\n  widget: { role: widget }\nsteps:\n  - launch: [app, widget]\n"

    @Test func nothingHappensWithin() throws {
        // A suspended widget must not render, however long one looks.
        try passes("quiet", "summary: x\n" + Self.processes + """
              - suspend: widget
              - set: { in: app, key: theme, value: dark }
              - quiet: { for: render, in: widget, seconds: 0.5 }
            """)
        try fails("quiet-mutated", "summary: x\n" + Self.processes + """
              - set: { in: app, key: theme, value: dark }
              - quiet: { for: change, in: widget, key: theme, seconds: 5 }
            """, saying: "should have had no change, key theme for 5.0 s, but had: change theme")
    }

    @Test func aDiagnosticsText() throws {
        let app = """
            app:
              name: A
              targets:
                main-app: { bundle-id: com.example.a, app-groups: [group.com.example.a] }
                widget: { bundle-id: com.example.a.widget, suite: group.com.example.a }
            """
        try passes("message", "summary: x\n" + app + "\n" + Self.processes + """
              - wait: { for: warning, in: widget, kind: missing-entitlement, message: "not entitled to app group group.com.example.a" }
            """)
        try fails("message-mutated", "summary: x\n" + app + "\n" + Self.processes + """
              - wait: { for: warning, in: widget, message: "group.com.example.other", timeout: 1 }
            """, saying: "no warning, message containing \"group.com.example.other\" event in widget within 1.0 s")
    }

    @Test func restartAfterAKill() throws {
        try passes("restart", "summary: x\n" + Self.processes + """
              - kill: widget
              - restart: widget
              - expect: { in: widget, key: theme, absent: true }
            """)
        try fails("restart-mutated", "summary: x\nprocesses:\n  app: { role: main-app }\n  widget: { role: widget }\nsteps:\n  - restart: widget\n",
                  saying: "widget was never launched: use launch, not restart")
    }

    @Test func removeSuiteAndTheSearchList() throws {
        try passes("suites", "summary: x\n" + Self.processes + """
              - add-suite: { in: app, name: com.example.extra }
              - expect: { in: app, search-list: [NSArgumentDomain, group.com.example.notes, com.example.extra, NSGlobalDomain, NSLanguagesDomain, NSRegistrationDomain] }
              - remove-suite: { in: app, name: com.example.extra }
              - expect: { in: app, search-list: [NSArgumentDomain, group.com.example.notes, NSGlobalDomain, NSLanguagesDomain, NSRegistrationDomain] }
            """)
        try fails("suites-mutated", "summary: x\n" + Self.processes + """
              - add-suite: { in: app, name: com.example.extra }
              - remove-suite: { in: app, name: com.example.extra }
              - expect: { in: app, search-list: [NSArgumentDomain, group.com.example.notes, com.example.extra, NSGlobalDomain, NSLanguagesDomain, NSRegistrationDomain] }
            """, saying: "app's search list should be NSArgumentDomain, group.com.example.notes, com.example.extra")
    }

    @Test func changesByTheDomainTheValueComesFrom() throws {
        // A change says where its new value comes from: the suite's, then the registered default once the key is removed.
        try passes("value-domain", "summary: x\n" + Self.processes + """
              - set: { in: app, key: theme, value: dark }
              - wait: { for: change, in: widget, key: theme, value-domain: group.com.example.notes }
              - remove: { in: app, key: theme }
              - wait: { for: change, in: app, key: theme, value-domain: NSRegistrationDomain }
            """)
        try fails("value-domain-mutated", "summary: x\n" + Self.processes + """
              - set: { in: app, key: theme, value: dark }
              - wait: { for: change, in: widget, key: theme, value-domain: NSArgumentDomain, timeout: 1 }
            """, saying: "no change, key theme, value from NSArgumentDomain event in widget within 1.0 s")
    }
}
