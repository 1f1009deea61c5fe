import Foundation
import TestSupport
import Testing

/// The timeline as a person sees it: rendered by a real browser (Debian's
/// chromium, headless), the page must draw lanes, dots and arrows, with the
/// failure first, and its zoom buttons must scale the time axis.
@Suite struct TimelineScreenshotTests {
    let folder = TemporaryRoot()

    static let chromium = ExternalTool("chromium", candidates: ["/usr/bin/chromium", "/usr/bin/chromium-browser"])

    /// Runs a passing and a failing scenario with `--timeline`; returns the page's path.
    func writeTimeline() throws -> String {
        let passing = folder.path + "/passing.yaml"
        let failing = folder.path + "/failing.yaml"
        try """
        summary: the app's write reaches the widget
        processes: { app: { role: main-app }, widget: { role: widget } }
        steps:
          - launch: [app, widget]
          - set: { in: app, key: theme, value: dark }
          - wait: { for: change, in: widget, key: theme, value: dark, timeout: 60 }
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
        let run = try runBounded(
            BuiltExecutable.path("groupsim"), ["run", "--timeline", html, passing, failing],
            environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(run.status == 1)
        return html
    }

    @Test(.enabled(if: chromium.shouldRun, chromium.missing))
    func aRealBrowserDrawsTheTimeline() throws {
        guard let chromium = Self.chromium.located() else { return }
        let html = try writeTimeline()
        let page = try String(contentsOfFile: html, encoding: .utf8)
        // The failure comes first, then the passing run with its arrow and latency.
        let failure = page.range(of: "failing.yaml")
        let success = page.range(of: "passing.yaml")
        #expect(failure != nil && success != nil && failure!.lowerBound < success!.lowerBound)
        #expect(page.contains("marker-end=\"url(#arrow)\"") && page.contains("changes seen in other processes: 1"))

        let png = folder.path + "/timeline.png"
        let shot = try runBounded(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--screenshot=\(png)", "--window-size=1400,1000", "file://\(html)",
            ],
            environment: ["HOME": folder.path], timeout: 120)
        #expect(shot.status == 0, "\(shot.stderr)")
        let image = try Data(contentsOf: URL(fileURLWithPath: png))
        #expect(image.starts(with: [0x89, 0x50, 0x4E, 0x47]), "not a PNG")
        // A blank page compresses to a few kilobytes; lanes, dots and text do not.
        #expect(image.count > 20_000, "the screenshot is \(image.count) bytes: the page drew next to nothing")
    }

    /// A probe appended to the page presses the first picture's zoom buttons
    /// (and zooms with ctrl + wheel) in a real browser, and writes what each
    /// did into the page, which chromium then prints.
    static let zoomProbe = """
        <script>
        (function () {
          var lines = [];
          try {
            var svg = document.querySelector("div.scroll > svg"), box = svg.parentNode, bar = box.previousElementSibling;
            var dot = svg.querySelector("circle:last-of-type"), name = svg.querySelector("text.label");
            function note(step) {
              lines.push(step + " width=" + svg.getAttribute("width") + " dot=" + dot.getAttribute("cx")
                + " name-x=" + name.getAttribute("x") + " name-offset=" + (name.getBoundingClientRect().left - box.getBoundingClientRect().left).toFixed(1) + " name-px=" + name.getBoundingClientRect().width.toFixed(1)
                + " ticks=" + svg.querySelectorAll("g.axis text").length + " view=" + box.clientWidth + " content=" + box.scrollWidth);
            }
            lines.push("axis start=" + svg.getAttribute("data-axis").split(" ")[0]);
            note("start");
            bar.querySelector("button.zoom-in").click(); note("in");
            bar.querySelector("button.zoom-in").click(); note("in-again");
            bar.querySelector("button.zoom-out").click(); note("out");
            bar.querySelector("button.zoom-fit").click(); note("fit");
            var wheel = new WheelEvent("wheel", { deltaY: -300, ctrlKey: true, bubbles: true, cancelable: true,
                                                  clientX: box.getBoundingClientRect().left + 400 });
            dot.dispatchEvent(wheel); note("wheel");
            lines.push("wheel-default-prevented=" + wheel.defaultPrevented);
            // Scrolled sideways, the lane names stay at the picture's left edge.
            // The browser sends its scroll event with the next frame, which a
            // loaded machine may not draw within the time budget: the event
            // is sent here at once, as the browser would.
            box.scrollLeft = 600;
            box.dispatchEvent(new Event("scroll"));
            lines.push("scrolled by=" + box.scrollLeft + " name-offset=" + (name.getBoundingClientRect().left - box.getBoundingClientRect().left).toFixed(1));
          } catch (error) {
            lines.push("error " + error);
          }
          done();
          function done() {
            var out = document.createElement("pre");
            out.id = "zoom-probe";
            out.textContent = lines.join("\\n");
            document.body.appendChild(out);
          }
        })();
        </script>
        """

    @Test(.enabled(if: chromium.shouldRun, chromium.missing))
    func theZoomButtonsScaleTheTimeAxisInARealBrowser() throws {
        guard let chromium = Self.chromium.located() else { return }
        let html = try writeTimeline()
        let page = try String(contentsOfFile: html, encoding: .utf8)
        // Without JavaScript the picture is as drawn: the buttons come from the page's one script.
        #expect(!page.contains("<button") && page.components(separatedBy: "<script>").count == 2)
        let probed = folder.path + "/probed.html"
        try page.replacingOccurrences(of: "</body>", with: Self.zoomProbe + "</body>").write(toFile: probed, atomically: true, encoding: .utf8)
        let dump = try runBounded(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                "--virtual-time-budget=10000", "--dump-dom", "file://\(probed)",
            ],
            environment: ["HOME": folder.path], timeout: 120)
        #expect(dump.status == 0, "\(dump.stderr)")
        guard let open = dump.stdout.range(of: "<pre id=\"zoom-probe\">"),
            let close = dump.stdout.range(of: "</pre>", range: open.upperBound..<dump.stdout.endIndex)
        else {
            Issue.record("the probe wrote nothing: \(dump.stdout.suffix(2000)) \(dump.stderr)")
            return
        }
        let report = String(dump.stdout[open.upperBound..<close.lowerBound])
        var steps: [String: [String: String]] = [:]
        for line in report.split(separator: "\n") {
            let words = line.split(separator: " ")
            steps[String(words[0])] = Dictionary(
                words.dropFirst().map { word in
                    let pair = word.split(separator: "=", maxSplits: 1)
                    return (String(pair[0]), pair.count > 1 ? String(pair[1]) : "")
                }, uniquingKeysWith: { _, last in last })
        }
        #expect(!report.contains("error"), "\(report)")
        func number(_ step: String, _ field: String) -> Double { steps[step]?[field].flatMap(Double.init) ?? .nan }
        let left = number("axis", "start")  // where the time after start-up begins: what lies left of it does not scale
        #expect(left > 0, "\(report)")
        // Zooming in scales the time axis after start-up by 1.5 each press.
        #expect(abs((number("in", "width") - left) - 1.5 * (number("start", "width") - left)) < 1, "\(report)")
        #expect(abs((number("in-again", "width") - left) - 1.5 * (number("in", "width") - left)) < 1, "\(report)")
        #expect(abs((number("in-again", "dot") - left) - 2.25 * (number("start", "dot") - left)) < 1, "\(report)")
        #expect(number("in-again", "ticks") > number("start", "ticks"), "the axis was not laid out again: \(report)")
        #expect(abs(number("out", "width") - number("in", "width")) < 1, "\(report)")
        // Text keeps its place and size at every zoom.
        for step in ["in", "in-again", "out", "fit", "wheel"] {
            #expect(number(step, "name-x") == number("start", "name-x") && number(step, "name-px") == number("start", "name-px"), "\(report)")
        }
        // Fit: the whole run in the page's width, nothing to scroll.
        #expect(abs(number("fit", "width") - number("fit", "view")) < 1 && number("fit", "content") <= number("fit", "view"), "\(report)")
        // ctrl + wheel zooms in, instead of zooming the page.
        #expect(number("wheel", "width") > number("fit", "width") + 100, "\(report)")
        #expect(report.contains("wheel-default-prevented=true"), "\(report)")
        #expect(number("scrolled", "by") == 600 && number("scrolled", "name-offset") == number("start", "name-offset"), "\(report)")
    }
}
