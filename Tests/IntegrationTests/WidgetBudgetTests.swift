import AppModel
import AppProtocol
import DeviceState
import Foundation
import GroupDefaults
import ScenarioModel
import TestSupport
import Testing

/// The widget reload budget with real app and widget processes, the device's
/// clock advanced by `groupsim device clock`, and the step and manifest fields.
@Suite struct WidgetBudgetTests {
    let root = TemporaryRoot()

    func isRender(_ reason: String) -> (AppEvent) -> Bool {
        { if case .render(_, let why, _) = $0 { why == reason } else { false } }
    }

    @Test func theDefaultBudgetDefersTheFortyFirstBackgroundReloadUntilTheNextDay() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let app = try AppProcess("main-app", root: root, arguments: ["--background"])
        let widget = try AppProcess("widget", root: root)
        // Forty, the default budget.
        for _ in 1...40 {
            _ = try app.request(.reloadWidgets)
            try widget.event(isRender("reload-request"))
        }
        _ = try app.request(.reloadWidgets)
        let today = DeviceClock.dayText(DeviceClock.day(of: Date()))
        try app.event {
            if case .warning("widget-reload-deferred", let message) = $0 { message.contains("budget of 40 reloads for \(today) ") } else { false }
        }
        let shown = try groupsim(["device", "clock", "iPhone"], root: root)
        #expect(shown.stdout.contains("com.example.notes.widget") && shown.stdout.contains("used 40, deferred 1"), "\(shown.stdout)")

        let advanced = try groupsim(["device", "clock", "iPhone", "--advance", "1d"], root: root)
        #expect(advanced.stdout.contains("delivered the deferred reload of com.example.notes.widget"), "\(advanced.stdout)\(advanced.stderr)")
        #expect(advanced.stdout.contains("(1.00 days) ahead"), "\(advanced.stdout)")
        try widget.event(isRender("deferred-reload"))
        // The delivered reload is the new day's first: the budget has room again.
        _ = try app.request(.reloadWidgets)
        try widget.event(isRender("reload-request"))
        #expect(try groupsim(["device", "clock", "iPhone"], root: root).stdout.contains("used 2, deferred 0"))
    }

    @Test func foregroundReloadsAreFreeAndANeverAdvancedClockIsTheRealTime() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let app = try AppProcess("main-app", root: root)
        let widget = try AppProcess("widget", root: root)
        for _ in 1...3 {
            _ = try app.request(.reloadWidgets)
            try widget.event(isRender("reload-request"))
        }
        let shown = try groupsim(["device", "clock", "iPhone"], root: root).stdout
        #expect(shown.contains("used 0, deferred 0, free 3") && shown.contains("(day \(Int(Date().timeIntervalSince1970 / 86_400))"), "\(shown)")
        #expect(shown.contains("0 s ahead of real time"), "\(shown)")
    }

    @Test func badClockInputNamesWhatIsWrong() throws {
        let unknown = try groupsim(["device", "clock", "iPhon"], root: root)
        #expect(unknown.status != 0 && unknown.stderr.contains("no device named iPhon"), "\(unknown.stderr)")
        let duration = try groupsim(["device", "clock", "iPhone", "--advance", "soon"], root: root)
        #expect(duration.status != 0 && duration.stderr.contains("--advance is a duration such as 6h"), "\(duration.stderr)")
        let tooFar = try groupsim(["device", "clock", "iPhone", "--advance", "400d"], root: root)
        #expect(tooFar.status != 0 && tooFar.stderr.contains("found '400d'"), "\(tooFar.stderr)")
    }

    @Test func advanceClockStepsReadBackAsTheSameSteps() throws {
        for (device, seconds) in [(nil, 86_400.0), ("iPad", 6 * 3_600), (nil, 90), (nil, 1.5)] as [(String?, Double)] {
            let text =
                "summary: x\ndevices: [iPhone, iPad]\nprocesses: { app: { role: main-app } }\nsteps:\n"
                + StepWriter.lines(.advanceClock(device: device, seconds: seconds)).joined(separator: "\n") + "\n"
            let scenario = try ScenarioParser.parse(text, file: "/tmp/clock.yaml", fileSystem: FixedScenarioFiles())
            guard case .advanceClock(let readDevice, let readSeconds) = scenario.steps[0].action else {
                Issue.record("not an advance-clock step: \(text)")
                continue
            }
            #expect(readDevice == device && readSeconds == seconds, "\(text)")
        }
    }

    func parseError(_ text: String) -> String {
        do {
            _ = try ScenarioParser.parse(text, file: "/tmp/budget.yaml", fileSystem: FixedScenarioFiles())
            return "parsed"
        } catch { return "\(error)" }
    }

    @Test func badStepAndManifestValuesNameTheirPlace() throws {
        let base = "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n"
        let duration = parseError(base + "  - advance-clock: soon\n")
        #expect(duration.contains("/tmp/budget.yaml:4:") && duration.contains("advance-clock's 'by' is a duration"), "\(duration)")
        let device = parseError(base + "  - advance-clock: { device: iPad, by: 1h }\n")
        #expect(device.contains("/tmp/budget.yaml:4:") && device.contains("iPad"), "\(device)")
        let widget = parseError("summary: x\nprocesses: { w: { role: widget, launch: background } }\nsteps:\n  - launch: w\n")
        #expect(widget.contains("/tmp/budget.yaml:2:") && widget.contains("is for the main-app process"), "\(widget)")
        let launch = parseError("summary: x\nprocesses: { app: { role: main-app, launch: later } }\nsteps:\n  - launch: app\n")
        #expect(launch.contains("launch is foreground") && launch.contains("'later'"), "\(launch)")
        let manifest = parseError(
            "summary: x\napp:\n  name: N\n  targets:\n    main-app: { bundle-id: com.example.a }\n"
                + "    widget: { bundle-id: com.example.w, reload-budget: -1 }\nprocesses: { app: { role: main-app } }\nsteps:\n  - launch: app\n")
        #expect(manifest.contains("/tmp/budget.yaml:6:") && manifest.contains("reload-budget is"), "\(manifest)")
    }

    /// A damaged clock or budget file gives a clear error or a bounded count, never a crash.
    @Test func hostileClockAndBudgetFilesAreRefusedOrBounded() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let library = root.path + "/devices/iPhone/Library"
        try FileManager.default.createDirectory(atPath: library + "/Clock", withIntermediateDirectories: true)
        for offset in ["<real>1e300</real>", "<real>-5</real>", "<integer>9223372036854775807</integer>", "<string>soon</string>"] {
            let plist = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>offset</key>"# + offset + "</dict></plist>"
            try plist.write(toFile: library + "/Clock/clock.plist", atomically: true, encoding: .utf8)
            for arguments in [["device", "clock", "iPhone"], ["device", "clock", "iPhone", "--advance", "1h"]] {
                let shown = try groupsim(arguments, root: root)
                #expect(shown.status == 1 && shown.stderr.contains("clock.plist: offset"), "\(offset): \(shown.status) \(shown.stderr)")
            }
        }
        try FileManager.default.removeItem(atPath: library + "/Clock/clock.plist")

        let today = Int(Date().timeIntervalSince1970 / 86_400)
        let counters =
            "<dict><key>day</key><integer>\(today)</integer><key>used</key><integer>9223372036854775807</integer>"
            + "<key>deferred</key><integer>9223372036854775807</integer><key>free</key><integer>-9223372036854775808</integer></dict>"
        try FileManager.default.createDirectory(atPath: library + "/WidgetCenter", withIntermediateDirectories: true)
        try
            (#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>budget:com.example.notes.widget</key>"# + counters
            + "</dict></plist>").write(toFile: library + "/WidgetCenter/timeline-reloads.plist", atomically: true, encoding: .utf8)
        let app = try AppProcess("main-app", root: root, arguments: ["--background"])
        _ = try app.request(.reloadWidgets)
        try app.event { if case .warning("widget-reload-deferred", _) = $0 { true } else { false } }
        #expect(app.process.isRunning)
    }

    /// Counters of a day far after the device's (day 2^40 in a hand-edited
    /// file) deferred every reload for ever and named nothing: they start
    /// over for today, and the warning names the file and the day.
    @Test func budgetCountersOfALaterDayStartOverAndNameTheFile() throws {
        #expect(try groupsim(["app", "install"], root: root).status == 0)
        let folder = root.path + "/devices/iPhone/Library/WidgetCenter"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let counters = "<dict><key>day</key><integer>\(1 << 40)</integer><key>used</key><integer>40</integer></dict>"
        try
            (#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>budget:com.example.notes.widget</key>"# + counters
            + "</dict></plist>").write(toFile: folder + "/timeline-reloads.plist", atomically: true, encoding: .utf8)
        let app = try AppProcess("main-app", root: root, arguments: ["--background"])
        let widget = try AppProcess("widget", root: root)
        _ = try app.request(.reloadWidgets)
        try app.event {
            if case .warning(_, let message) = $0 {
                message.contains(folder + "/timeline-reloads.plist") && message.contains("day \(1 << 40)")
            } else {
                false
            }
        }
        try widget.event(isRender("reload-request"))
    }
}
