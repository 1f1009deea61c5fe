import Foundation
import Testing
import TestSupport

/// The timeline as a person sees it: rendered by a real browser (Debian's
/// chromium, headless), the page must draw lanes, dots and arrows, with the
/// failure first.
@Suite struct TimelineScreenshotTests {
    let folder = TemporaryRoot()

    @Test func aRealBrowserDrawsTheTimeline() throws {
        guard let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            Issue.record("chromium is not installed (scripts/test.sh installs it with GROUPSIM_NEED_CHROMIUM=1)")
            return
        }
        let passing = folder.path + "/passing.yaml", failing = folder.path + "/failing.yaml"
        try """
            summary: the app's write reaches the widget
            processes: { app: { role: main-app }, widget: { role: widget } }
            steps:
              - launch: [app, widget]
              - set: { in: app, key: theme, value: dark }
              - wait: { for: change, in: widget, key: theme, value: dark }
            """.write(toFile: passing, atomically: true, encoding: .utf8)
        try """
            summary: a check that fails
            processes: { app: { role: main-app } }
            steps:
              - launch: app
              - expect: { in: app, key: theme, value: never }
            """.write(toFile: failing, atomically: true, encoding: .utf8)
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let html = folder.path + "/timeline.html"
        let run = try runBounded(BuiltExecutable.path("groupsim"), ["run", "--timeline", html, passing, failing],
                                 environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(run.status == 1)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        // The failure comes first, then the passing run with its arrow and latency.
        let failure = page.range(of: "failing.yaml"), success = page.range(of: "passing.yaml")
        #expect(failure != nil && success != nil && failure!.lowerBound < success!.lowerBound)
        #expect(page.contains("marker-end=\"url(#arrow)\"") && page.contains("changes seen in other processes: 1"))

        let png = folder.path + "/timeline.png"
        let shot = try runBounded(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                             "--screenshot=\(png)", "--window-size=1400,1000", "file://\(html)"],
                                  environment: ["HOME": folder.path], timeout: 120)
        #expect(shot.status == 0, "\(shot.stderr)")
        let image = try Data(contentsOf: URL(fileURLWithPath: png))
        #expect(image.starts(with: [0x89, 0x50, 0x4E, 0x47]), "not a PNG")
        // A blank page compresses to a few kilobytes; lanes, dots and text do not.
        #expect(image.count > 20_000, "the screenshot is \(image.count) bytes: the page drew next to nothing")
    }
}
