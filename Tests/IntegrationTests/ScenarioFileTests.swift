import Foundation
import TestSupport
import Testing

/// Scenario files and app manifests: values in them reach the processes
/// exactly or the file is refused with file:line:column when it is checked;
/// no file can make the runner hang or crash.
@Suite struct ScenarioFileTests {
    let folder = TemporaryRoot()

    func write(_ name: String, _ text: String) throws -> String {
        let path = folder.path + "/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `groupsim ARGUMENTS` with TMPDIR in the test folder; a run that has not
    /// ended within `limit` seconds is killed and fails the test (it hung).
    func groupsimRun(_ arguments: [String], limit: TimeInterval = 60) throws -> ProcessResult {
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        return try runBounded(BuiltExecutable.path("groupsim"), arguments, environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: limit)
    }

    /// Checks that `groupsim run --list FILE` refuses the file with `location` (":line:column:") and `message`.
    func expectRefused(
        _ name: String, _ yaml: String, _ location: String, _ message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let path = try write(name + ".yaml", yaml)
        let result = try groupsimRun(["run", "--list", path])
        #expect(result.status == 2, "\(name): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(path + location + " "), "\(name): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "\(name): \(result.stderr)", sourceLocation: sourceLocation)
        try FileManager.default.removeItem(atPath: path)
    }

    static let header = "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n  - launch: app\n"

    @Test func integersOutsideInt64AndRealsThatAreNotFiniteAreRefused() throws {
        try expectRefused(
            "big", Self.header + "  - set: { in: app, key: n, value: 18446744073709551615 }\n",
            ":5:36:", "steps[1].set.value: 18446744073709551615 is outside the 64-bit integer range")
        try expectRefused(
            "small", Self.header + "  - set: { in: app, key: n, value: [1, -9223372036854775809] }\n",
            ":5:40:", "steps[1].set.value[1]: -9223372036854775809 is outside the 64-bit integer range")
        try expectRefused(
            "by", Self.header + "  - increment: { in: app, key: n, by: 99999999999999999999 }\n",
            ":5:39:", "steps[1].increment.by: 99999999999999999999 is outside the 64-bit integer range")
        // Base 60 as YAML 1.1 reads it (Yams' own reading multiplies without an overflow check).
        try expectRefused(
            "base-60", Self.header + "  - set: { in: app, key: n, value: 1:0:0:0:0:0:0:0:0:0:0:0:0 }\n",
            ":5:36:", "steps[1].set.value: 1:0:0:0:0:0:0:0:0:0:0:0:0 is outside the 64-bit integer range")
        try expectRefused(
            "infinite", Self.header + "  - set: { in: app, key: n, value: .inf }\n",
            ":5:36:", "steps[1].set.value: .inf is not a finite number")
        try expectRefused(
            "too-large", Self.header + "  - set: { in: app, key: n, value: 1e400 }\n",
            ":5:36:", "steps[1].set.value: 1e400 is too large for a real")
        try expectRefused(
            "sub-millisecond", Self.header + "  - set: { in: app, key: d, value: !date 2024-05-01T12:00:00.6786Z }\n",
            ":5:36:", "steps[1].set.value: '2024-05-01T12:00:00.6786Z' is finer than a millisecond")
        try expectRefused(
            "no-such-day", Self.header + "  - set: { in: app, key: d, value: !date 2024-02-30 }\n",
            ":5:36:", "steps[1].set.value: '2024-02-30' is not a date")
        try expectRefused(
            "manifest",
            """
            summary: x
            app:
              name: A
              targets:
                main-app: { bundle-id: com.example.a, registered-defaults: { n: 18446744073709551616 } }
            steps: []
            """, ":5:69:", "registered-defaults.n: 18446744073709551616 is outside the 64-bit integer range")
    }

    /// Each level doubles the one before: 2^40 values once expanded.
    static func aliasBomb(indent: String) -> String {
        (["\(indent)- &a0 [x, x]"] + (1..<40).map { "\(indent)- &a\($0) [*a\($0 - 1), *a\($0 - 1)]" }).joined(separator: "\n") + "\n"
    }

    @Test func aliasBombsAreRefusedBeforeTheyGrow() throws {
        try expectRefused(
            "value-bomb", Self.header + "  - set:\n      in: app\n      key: k\n      value:\n" + Self.aliasBomb(indent: "        "),
            ":23:23:", "aliases expand this file past 100000 values")
        // A key that is an alias is expanded by the YAML reader itself (its duplicate-key check hashes every key).
        try expectRefused(
            "key-bomb", "summary: x\nsteps: []\nbombs:\n" + Self.aliasBomb(indent: "  ") + "? *a39\n: 1\n",
            ":18:17:", "aliases expand this file past 100000 values")
        try expectRefused(
            "inline-app-bomb",
            """
            summary: x
            app:
              name: A
              targets:
                main-app:
                  bundle-id: com.example.a
                  registered-defaults:
                    k:

            """ + Self.aliasBomb(indent: "        ") + "steps: []\n", ":23:23:", "aliases expand this file past 100000 values")
        let manifest = try write(
            "bomb-app.yaml",
            "name: A\ntargets:\n  main-app:\n    bundle-id: com.example.a\n    registered-defaults:\n      k:\n"
                + Self.aliasBomb(indent: "        "))
        let path = try write("uses-bomb-app.yaml", "summary: x\napp: bomb-app.yaml\nsteps: []\n")
        let result = try groupsimRun(["run", "--list", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains(manifest + ":21:23: "), "\(result.stderr)")
        #expect(result.stderr.contains("aliases expand this file past 100000 values"), "\(result.stderr)")
    }

    @Test func aFewAliasesAreStillFine() throws {
        let path = try write(
            "aliases.yaml",
            Self.header + """
                  - set: { in: app, key: a, value: &shared { theme: dark, sizes: [1, 2, 3] } }
                  - set: { in: app, key: b, value: *shared }
                  - expect: { in: app, key: b, value: { theme: dark, sizes: [1, 2, 3] } }
                """)
        let result = try groupsimRun(["run", path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test func durationsAndCountsAreRangeCheckedWhenTheFileIsChecked() throws {
        let wait = "  - wait: { for: change, in: app, key: k, timeout: "
        try expectRefused(
            "timeout-huge", Self.header + wait + "1e10 }\n", ":5:52:",
            "steps[1].wait.timeout: expected seconds more than 0 and at most 3600, found '1e10'")
        try expectRefused("timeout-inf", Self.header + wait + ".inf }\n", ":5:52:", "expected seconds more than 0 and at most 3600, found '.inf'")
        try expectRefused("timeout-nan", Self.header + wait + ".nan }\n", ":5:52:", "expected seconds more than 0 and at most 3600, found '.nan'")
        try expectRefused("timeout-zero", Self.header + wait + "0 }\n", ":5:52:", "expected seconds more than 0 and at most 3600, found '0'")
        try expectRefused(
            "burst-huge", Self.header + "  - burst: { in: app, count: 100000001, key: k }\n", ":5:30:",
            "steps[1].burst.count: expected a whole number from 1 to 100000, found '100000001'")
        try expectRefused(
            "sync-every", Self.header + "  - burst: { in: app, count: 10, key: k, sync-every: 0 }\n", ":5:54:",
            "steps[1].burst.sync-every: expected a whole number from 1 to 100000, found '0'")
        try expectRefused(
            "after-acks", Self.header + "  - kill: { process: app, after-acks: -1 }\n", ":5:39:",
            "steps[1].kill.after-acks: expected a whole number from 0 to 100000, found '-1'")
        try expectRefused(
            "times", Self.header + "  - expect: { in: app, saw: change, times: 1e3 }\n", ":5:44:",
            "steps[1].expect.times: expected a whole number from 0 to 100000, found '1e3'")
        try expectRefused(
            "status", Self.header + "  - expect: { exit: app, status: 256 }\n", ":5:34:",
            "steps[1].expect.status: expected a whole number from 0 to 255, found '256'")
        try expectRefused(
            "intent-status", Self.header + "  - intent: { name: Nope, status: -1 }\n", ":5:35:",
            "steps[1].intent.status: expected a whole number from 0 to 255, found '-1'")
        try expectRefused(
            "file-count", Self.header + "  - expect: { file: group.com.example.notes, count: -1 }\n", ":5:53:",
            "steps[1].expect.count: expected a whole number from 0 to 4000000, found '-1'")
        for period in ["1e10s", "0.001s", "infs"] {
            try expectRefused(
                "period-\(period)",
                """
                summary: x
                app:
                  name: A
                  targets:
                    widget: { bundle-id: com.example.a.widget, timeline: every \(period) }
                steps: []
                """, ":5:58:", "timeline: 'every Ns' needs N from 0.1 to 86400 seconds, found '\(period.dropLast())'")
        }
        try expectRefused(
            "widget-observer",
            """
            summary: x
            app:
              name: A
              targets:
                widget: { bundle-id: com.example.a.widget, observer: kvo }
            steps: []
            """, ":5:58:", "observer must be any-change, key-value-observing, did-change-notification, found 'kvo'")
        try expectRefused(
            "widget-observer-not-on-change",
            """
            summary: x
            app:
              name: A
              targets:
                widget: { bundle-id: com.example.a.widget, timeline: manual, observer: any-change }
            steps: []
            """, ":5:76:", "observer chooses how an on-change timeline hears of changes; this timeline is not on-change")
    }

    @Test func whereIntentsRunIsCheckedWhenTheFileIsChecked() throws {
        try expectRefused(
            "intents-placement",
            """
            summary: x
            app:
              name: A
              intents: in-the-app
              targets:
                main-app: { bundle-id: com.example.a }
            steps: []
            """, ":4:12:", "intents must be extension or in-app (where the app's intents run), found 'in-the-app'")
        try expectRefused(
            "intents-in-app-without-app",
            """
            summary: x
            app:
              name: A
              intents: in-app
              targets:
                intent-extension: { bundle-id: com.example.a.intents, intents: { T: { toggle: t } } }
            steps: []
            """, ":4:12:", "intents: in-app runs the intents in the main app's process; add a main-app target")
        // An in-app intent needs a main-app process of the scenario to run in.
        try expectRefused(
            "intents-in-app-no-process",
            """
            summary: x
            app:
              name: A
              intents: in-app
              targets:
                main-app: { bundle-id: com.example.a }
                intent-extension: { bundle-id: com.example.a.intents, intents: { T: { toggle: t } } }
            steps:
              - intent: { name: T }
            """, ":9:13:", "the scenario has no main-app process on iPhone to run this one in")
    }

    @Test func valuesNestingDeeperThanTheLimitAreRefusedWhenTheFileIsChecked() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        try expectRefused(
            "deep", Self.header + "  - set: { in: app, key: k, value: \(nested(513)) }\n", ":5:548:",
            "steps[1].set.value nests arrays and dictionaries more than 512 deep")
        // An appended item goes one level down into the array.
        try expectRefused(
            "deep-append", Self.header + "  - append: { in: app, key: k, value: \(nested(512)) }\n", ":5:550:",
            "steps[1].append.value nests arrays and dictionaries more than 511 deep")
        // Depth through an alias counts.
        try expectRefused(
            "deep-alias",
            Self.header + "  - set: { in: app, key: a, value: &deep \(nested(300)) }\n"
                + "  - set: { in: app, key: b, value: \(String(repeating: "[", count: 300))*deep\(String(repeating: "]", count: 300)) }\n",
            ":6:336:", "nest more than 528 deep")
        // 512 deep is fine, end to end.
        let path = try write("deep-ok.yaml", Self.header + "  - set: { in: app, key: k, value: \(nested(512)) }\n  - synchronize: app\n")
        let result = try groupsimRun(["run", path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    @Test func datesAndIntegersReachTheProcessesAndComeBackExactly() throws {
        let path = try write(
            "exact.yaml",
            Self.header + """
                  - set: { in: app, key: d, value: !date 2024-05-01T12:00:00.678Z }
                  - set: { in: app, key: n, value: -1000000000000000000 }
                  - set: { in: app, key: m, value: -9223372036854775808 }
                  - set: { in: app, key: r, value: 0.1 }
                  - increment: { in: app, key: c, by: 9223372036854775807 }
                  - synchronize: app
                  - expect:
                      - { in: app, key: d, value: !date 2024-05-01T12:00:00.678Z }
                      - { in: app, key: n, value: -1000000000000000000 }
                      - { in: app, key: m, value: -9223372036854775808 }
                      - { in: app, key: c, value: 9223372036854775807 }
                      - { file: group.com.example.notes, key: d, value: !date 2024-05-01T12:00:00.678Z }
                      - { file: group.com.example.notes, key: n, value: -1000000000000000000 }
                      - { file: group.com.example.notes, key: r, value: 0.1 }
                """)
        let result = try groupsimRun(["run", path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }

    /// A scenario whose app manifest is a device or a FIFO is refused when the
    /// file is checked, not read forever.
    @Test func anAppManifestThatIsADeviceOrAFIFOIsRefused() throws {
        let fifo = folder.path + "/manifest.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        for manifest in ["/dev/zero", fifo] {
            let path = try write("device-app.yaml", "summary: x\napp: \(manifest)\nprocesses: { a: { role: main-app } }\nsteps: [ { launch: a } ]\n")
            let result = try groupsimRun(["run", "--list", path], limit: 20)
            #expect(result.status != 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains(manifest), "\(result.stderr)")
        }
    }
}
