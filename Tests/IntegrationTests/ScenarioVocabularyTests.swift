import Foundation
import TestSupport
import Testing

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

    /// The format's forms as the step table shows them: a step that takes
    /// nothing may be written bare (`- wait-cloud` was refused with "expected
    /// a mapping"); a bare step that needs more says how to write it; a key a
    /// file check cannot use is refused (`as:` was silently ignored); an
    /// `edit-file` says its device and makes a file the domain never had.
    @Test func bareStepsStrayCheckKeysAndEditFile() throws {
        let cloud = "summary: x\ndevices: [ { iPhone: { account: alice } } ]\nprocesses:\n  app: { role: main-app }\nsteps:\n  - launch: [app]\n"
        try passes(
            "bare",
            cloud + """
                  - wait-cloud
                  - edit-file: { domain: group.com.example.notes, key: k, value: 1 }
                  - expect:
                    - { file: group.com.example.notes, key: k, value: 1 }
                """)
        let edited = try run(
            "bare-edit-fails",
            cloud
                + "  - edit-file: { domain: group.com.example.notes, key: k, value: 1 }\n  - expect: [ { file: group.com.example.notes, key: k, value: 2 } ]\n"
        )
        #expect(edited.stdout.contains("edit the file of group.com.example.notes on iPhone by hand: k = 1"), "\(edited.stdout)")
        let quit = try run("bare-quit", "summary: x\n" + Self.processes + "  - quit\n")
        #expect(quit.status == 2 && quit.stderr.contains("'quit' takes a process name or fields: write it as '- quit: …'"), "\(quit.stderr)")
        let typed = try run(
            "file-as", "summary: x\n" + Self.processes + "  - expect: [ { file: group.com.example.notes, key: k, value: 1, as: bool } ]\n")
        #expect(typed.status == 2 && typed.stderr.contains("'as' does not go with a file check"), "\(typed.stderr)")
    }

    /// A `run` script can call the runner's own `groupsim` by name and find
    /// its folder in GROUPSIM_BINARIES (it was on no PATH, and named nowhere).
    @Test func aRunScriptCallsTheRunnersGroupsim() throws {
        try passes(
            "run-groupsim",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - synchronize: app
                  - run: { args: [groupsim, defaults, read, group.com.example.notes, theme], output: dark }
                  - run: [sh, -c, 'test -x "$GROUPSIM_BINARIES/groupsim" && test "$(command -v groupsim)" = "$GROUPSIM_BINARIES/groupsim"']
                """)
    }

    /// Counts of events within bounds, not only exact: `times: { at-least, at-most }`.
    @Test func eventCountsWithinBounds() throws {
        let three =
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - wait: { for: render, in: widget, card: { theme: dark } }
                  - set: { in: app, key: theme, value: light }
                  - wait: { for: render, in: widget, card: { theme: light } }
                  - set: { in: app, key: theme, value: blue }
                  - wait: { for: render, in: widget, card: { theme: blue } }
                  - wait: { for: change, in: app, key: theme, value: blue }

                """
        // The app is told of each of its own three changes (the last waited for, so all three are in).
        try passes("bounds", three + "  - expect: [ { in: app, saw: change, key: theme, times: { at-least: 2, at-most: 3 } } ]\n")
        try fails(
            "too-few", three + "  - expect: [ { in: app, saw: change, key: theme, times: { at-least: 4 } } ]\n",
            saying: "at least 4 time(s), saw it 3 time(s)")
        try fails(
            "too-many", three + "  - expect: [ { in: app, saw: change, key: theme, times: { at-most: 2 } } ]\n",
            saying: "at most 2 time(s), saw it 3 time(s)")
        let wrong = try run("upside-down", three + "  - expect: [ { in: app, saw: change, key: theme, times: { at-least: 4, at-most: 2 } } ]\n")
        #expect(wrong.status == 2 && wrong.stderr.contains("at-least (4) is more than at-most (2)"), "\(wrong.stderr)")
    }

    @Test func nothingHappensWithin() throws {
        // A suspended widget must not render, however long one looks.
        try passes(
            "quiet",
            "summary: x\n" + Self.processes + """
                  - suspend: widget
                  - set: { in: app, key: theme, value: dark }
                  - quiet: { for: render, in: widget, seconds: 0.5 }
                """)
        // An event a wait matched is not one the quiet step looks for, even when it came during the wait.
        try passes(
            "quiet-after-wait",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - wait: { for: render, in: widget, card: { theme: dark } }
                  - quiet: { for: render, in: widget, seconds: 0.3 }
                """)
        // The quiet step fails as soon as the change comes, and counts it from the start of the step before (the
        // widget may see the change before the runner has the app's answer): the long window only keeps a starved
        // machine's slow propagation from passing the broken scenario.
        try fails(
            "quiet-mutated",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - quiet: { for: change, in: widget, key: theme, seconds: 60 }
                """, saying: "should have had no change, key theme for 60.0 s, but had: change theme")
    }

    @Test func aDiagnosticsText() throws {
        let app = """
            app:
              name: A
              targets:
                main-app: { bundle-id: com.example.a, app-groups: [group.com.example.a] }
                widget: { bundle-id: com.example.a.widget, suite: group.com.example.a }
            """
        try passes(
            "message",
            "summary: x\n" + app + "\n" + Self.processes + """
                  - wait: { for: warning, in: widget, kind: missing-entitlement, message: "not entitled to app group group.com.example.a" }
                """)
        try fails(
            "message-mutated",
            "summary: x\n" + app + "\n" + Self.processes + """
                  - wait: { for: warning, in: widget, message: "group.com.example.other", timeout: 1 }
                """, saying: "no warning, message containing \"group.com.example.other\" event in widget within 1.0 s")
    }

    @Test func restartAfterAKill() throws {
        try passes(
            "restart",
            "summary: x\n" + Self.processes + """
                  - kill: widget
                  - restart: widget
                  - expect: { in: widget, key: theme, absent: true }
                """)
        try fails(
            "restart-mutated", "summary: x\nprocesses:\n  app: { role: main-app }\n  widget: { role: widget }\nsteps:\n  - restart: widget\n",
            saying: "widget was never launched: use launch, not restart")
    }

    @Test func removeSuiteAndTheSearchList() throws {
        try passes(
            "suites",
            "summary: x\n" + Self.processes + """
                  - add-suite: { in: app, name: com.example.extra }
                  - expect: { in: app, search-list: [NSArgumentDomain, group.com.example.notes, com.example.extra, NSGlobalDomain, NSLanguagesDomain, NSRegistrationDomain] }
                  - remove-suite: { in: app, name: com.example.extra }
                  - expect: { in: app, search-list: [NSArgumentDomain, group.com.example.notes, NSGlobalDomain, NSLanguagesDomain, NSRegistrationDomain] }
                """)
        try fails(
            "suites-mutated",
            "summary: x\n" + Self.processes + """
                  - add-suite: { in: app, name: com.example.extra }
                  - remove-suite: { in: app, name: com.example.extra }
                  - expect: { in: app, search-list: [NSArgumentDomain, group.com.example.notes, com.example.extra, NSGlobalDomain, NSLanguagesDomain, NSRegistrationDomain] }
                """, saying: "app's search list should be NSArgumentDomain, group.com.example.notes, com.example.extra")
    }

    @Test func changesByTheDomainTheValueComesFrom() throws {
        // A change says where its new value comes from: the suite's, then the registered default once the key is removed.
        try passes(
            "value-domain",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - wait: { for: change, in: widget, key: theme, value-domain: group.com.example.notes }
                  - remove: { in: app, key: theme }
                  - wait: { for: change, in: app, key: theme, value-domain: NSRegistrationDomain }
                """)
        try fails(
            "value-domain-mutated",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - wait: { for: change, in: widget, key: theme, value-domain: NSArgumentDomain, timeout: 1 }
                """, saying: "no change, key theme, value from NSArgumentDomain event in widget within 1.0 s")
    }

    @Test func aCommandRunForItsVerdict() throws {
        // A script that checks the files with another tool: its status is the verdict, its output is in the report.
        try
            "import plistlib, os, sys\np = os.environ['GROUPSIM_ROOT'] + '/devices/iPhone/Containers/Shared/AppGroup/group.com.example.notes/Library/Preferences/group.com.example.notes.plist'\nd = plistlib.load(open(p, 'rb'))\nprint('theme is', d.get('theme'))\nsys.exit(0 if d.get('theme') == sys.argv[1] else 3)\n"
            .write(toFile: folder.path + "/check.py", atomically: true, encoding: .utf8)
        try passes(
            "verdict",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - synchronize: app
                  - run: { args: [python3, check.py, dark], output: "theme is dark" }
                """)
        try fails(
            "verdict-mutated",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - synchronize: app
                  - run: [python3, check.py, light]
                """, saying: "run python3 exited with status 3, expected 0 (printed: theme is dark)")
    }

    @Test func whatTheDefaultsToolPrintedAndFilesBesideTheScenario() throws {
        try #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>imported</key><string>yes</string></dict></plist>"#
            .write(toFile: folder.path + "/import.plist", atomically: true, encoding: .utf8)
        try passes(
            "defaults-output",
            "summary: x\n" + Self.processes + """
                  - defaults: [import, group.com.example.notes, import.plist]
                  - defaults: { args: [read, group.com.example.notes, imported], output: "yes" }
                  - defaults: { args: [read-type, group.com.example.notes, imported], output: "Type is string" }
                """)
        try fails(
            "defaults-output-mutated",
            "summary: x\n" + Self.processes + """
                  - defaults: [import, group.com.example.notes, import.plist]
                  - defaults: { args: [read, group.com.example.notes, imported], output: "no" }
                """, saying: "defaults groupsim should have printed \"no\", it printed: yes")
    }

    @Test func everyKeyOfABurstOnDisk() throws {
        try passes(
            "burst-count",
            "summary: x\n" + Self.processes + """
                  - burst: { in: app, count: 200, key: "burst-{i}" }
                  - synchronize: app
                  - expect: { file: group.com.example.notes, matching: "burst-*", count: 200 }
                """)
        try fails(
            "burst-count-mutated",
            "summary: x\n" + Self.processes + """
                  - burst: { in: app, count: 200, key: "burst-{i}" }
                  - synchronize: app
                  - expect: { file: group.com.example.notes, matching: "burst-*", count: 201 }
                """, saying: "should hold 201 keys matching burst-*, holds 200")
    }

    @Test func aFailingCheckIsReportedAtItsOwnLineAndTheTeardownIsNamed() throws {
        let result = try run(
            "check-line",
            "summary: x\n" + Self.processes + """
                  - set: { in: app, key: theme, value: dark }
                  - expect:
                      - { in: app, key: theme, value: dark }
                      - { in: app, key: theme, value: light }
                """)
        #expect(result.status == 1)
        // The second check is on line 10 of the file (the expect on line 8).
        #expect(result.stdout.contains("check-line.yaml:10: expect"), "\(result.stdout)")
        #expect(result.stdout.contains("(the runner's teardown)"), "\(result.stdout)")
    }

    @Test func whatTheTypedGettersReturn() throws {
        let launch =
            "summary: x\nprocesses:\n  app: { role: main-app, args: [-flag, YES, -count, \"7\", -site, \"https://example.com\"] }\nsteps:\n  - launch: app\n"
        try passes(
            "typed",
            launch + """
                  - expect:
                      - { in: app, key: flag, as: bool, value: true }
                      - { in: app, key: count, as: integer, value: 7 }
                      - { in: app, key: count, as: double, value: 7.0 }
                      - { in: app, key: site, as: url, value: "https://example.com" }
                      - { in: app, key: missing, as: string, absent: true }
                """)
        try fails(
            "typed-mutated",
            launch + """
                  - expect: { in: app, key: flag, as: bool, value: false }
                """, saying: "app: bool(forKey: flag) should return false, it returns true")
    }

    /// `forced` checks `objectIsForced(forKey:)` of the process's instance, `domain:` `objectIsForced(forKey:inDomain:)`;
    /// anything else beside it is refused, and a value that is no boolean names itself.
    @Test func whatAnAdministratorForced() throws {
        // Forced before the launch: a push to running processes reaches them as a change, which a scenario waits for.
        let launch =
            "summary: x\nprocesses:\n  app: { role: main-app }\n  widget: { role: widget }\nsteps:\n"
            + "  - managed: { suite: group.com.example.notes, key: theme, value: dark }\n  - launch: [app, widget]\n"
        try passes(
            "forced",
            launch + """
                  - expect:
                      - { in: app, key: theme, forced: true }
                      - { in: widget, key: theme, forced: true, domain: group.com.example.notes }
                      - { in: app, key: theme, forced: false, domain: com.example.notes }
                      - { in: app, key: other, forced: false }
                """)
        try fails(
            "forced-mutated", launch + "  - expect: { in: app, key: theme, forced: false }\n",
            saying: "app: objectIsForced(forKey: \"theme\") should be false, it is true")
        let stray = try run("forced-value", launch + "  - expect: { in: app, key: theme, forced: true, value: dark }\n")
        #expect(stray.status == 2 && stray.stderr.contains("'value' does not go with a forced check"), "\(stray.stderr)")
        let notBool = try run("forced-maybe", launch + "  - expect: { in: app, key: theme, forced: maybe }\n")
        #expect(notBool.status == 2 && notBool.stderr.contains("maybe"), "\(notBool.stderr)")
        let noKey = try run("forced-no-key", launch + "  - expect: { in: app, forced: true }\n")
        #expect(noKey.status == 2 && noKey.stderr.contains("missing required key 'key'"), "\(noKey.stderr)")
    }

    @Test func aLaunchThatMustFail() throws {
        let blocked =
            #"  - run: [sh, -c, 'mkdir -p "$GROUPSIM_ROOT/devices/iPhone/Containers/Shared" && ln -s /tmp "$GROUPSIM_ROOT/devices/iPhone/Containers/Shared/AppGroup"']"#
            + "\n"
        let head = "summary: x\nprocesses:\n  app: { role: main-app }\nsteps:\n"
        try passes("launch-fails", head + blocked + "  - launch: { process: app, fails: \"symbolic link\" }\n")
        try fails(
            "launch-fails-mutated", head + "  - launch: { process: app, fails: \"symbolic link\" }\n",
            saying: "app started and kept running; it should have failed with \"symbolic link\"")
    }

    @Test func aBurstInTheBackground() throws {
        try passes(
            "background-burst",
            "summary: x\n" + Self.processes + """
                  - burst: { in: app, count: 300, key: "b{i}", background: true }
                  - set: { in: widget, key: meanwhile, value: 1 }
                  - wait-burst: app
                  - synchronize: app
                  - expect: { file: group.com.example.notes, matching: "b*", count: 300 }
                """)
        try fails(
            "background-burst-mutated",
            "summary: x\n" + Self.processes + """
                  - burst: { in: app, count: 300, key: "b{i}", background: true }
                  - wait-burst: widget
                """, saying: "widget has no burst running in the background")
    }
}
