import AppProtocol
import Foundation
import PropertyList
import ScenarioModel

/// A self-contained HTML picture of runs: one lane per process, events in
/// time, and an arrow from each write to every process where it was seen,
/// labelled with the latency. Hover a dot for the event's details. Buttons
/// above each picture (and ctrl + wheel over it) zoom the time axis; without
/// JavaScript the picture is the same, at its first scale.
package enum TimelineReport {
    static let laneHeight = 56.0
    static let left = 170.0
    static let width = 1100.0
    /// Pixels between time-axis labels, at any zoom.
    static let tickSpacing = 220.0

    package static func render(_ results: [ScenarioResult]) -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>groupsim run timeline</title>
            <style>
            body { font: 14px -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1d1d1f; }
            h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 32px; }
            .pass { color: #1a7f37; } .fail { color: #cf222e; }
            .summary { color: #57606a; margin: 4px 0 8px; } .failure { background: #ffebe9; padding: 8px; border-radius: 6px; white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 12px; }
            svg text { font-size: 11px; font-family: ui-monospace, monospace; } .lane { fill: #f6f8fa; } .label { font-size: 12px; font-weight: 600; }
            .legend span { display: inline-block; margin-right: 14px; } .scroll { overflow-x: auto; max-width: 100%; border: 1px solid #d0d7de; border-radius: 6px; } .dot { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px; vertical-align: middle; }
            .zoom { margin: 0 0 4px; color: #57606a; } .zoom button { font: inherit; min-width: 32px; margin-right: 4px; } .zoom span { margin-left: 6px; }
            </style></head><body>
            <h1>groupsim run — \(results.filter(\.passed).count) passed, \(results.filter { !$0.passed }.count) failed</h1>
            <div class="legend">
            """
        for (name, color) in [
            ("runner action / write", color(for: "action")), ("change seen / delivered", color(for: "change")),
            ("widget render", color(for: "render")), ("program output", color(for: "output")),
            ("warning / error", color(for: "warning")), ("exit", color(for: "exit")),
            ("ready / notification / result", color(for: "ready")),
        ] {
            html += "<span><i class=\"dot\" style=\"background:\(color)\"></i>\(name)</span>"
        }
        html += "<span>→ write to where it was seen, with latency</span>"
        html += "<span style=\"color:#0550ae\">→ iCloud: app write → upload → other device's agent → its app</span></div>\n"
        // Failures first: they are what a reader came for.
        let ordered = results.filter { !$0.passed } + results.filter(\.passed)
        for (index, result) in ordered.enumerated() {
            html +=
                "<h2 id=\"s\(index)\"><span class=\"\(result.passed ? "pass" : "fail")\">\(result.passed ? "✔" : "✘")</span> \(escape(result.scenario.name)) "
            html += "<small>(\(String(format: "%.2f", result.duration)) s)</small></h2>\n"
            html += "<div class=\"summary\">\(escape(result.scenario.summary)) — <code>\(escape(result.scenario.file))</code></div>\n"
            if let failure = result.failure {
                html += "<div class=\"failure\">line \(failure.line): \(escape(failure.step))\n\(escape(failure.message))</div>\n"
            }
            html += svg(result)
        }
        html += zoomScript + "</body></html>\n"
        return html
    }

    /// One script for the page: a zoom bar above each picture. Zooming
    /// scales the x positions after start-up (never the text, which keeps
    /// its size; start-up keeps its narrow band), lays the time axis out
    /// again at the new scale, hides latency labels that would overprint when
    /// zoomed out (their lines keep the hover text), and keeps the time under
    /// the pointer (or the middle of the view) in place; the lane names stay
    /// in view when the picture scrolls sideways. `data-axis` on each picture
    /// holds where the time after start-up begins, its width, and the span it
    /// shows in ms.
    static let zoomScript = """
        <script>
        (function () {
          var STEP = 1.5, TICK = \(tickSpacing), MAX_WIDTH = 200000, SVG = "http://www.w3.org/2000/svg";
          document.querySelectorAll("svg[data-axis]").forEach(function (svg) {
            var box = svg.parentNode, axis = svg.getAttribute("data-axis").split(" ").map(Number);
            var start = axis[0], plot = axis[1], span = axis[2];
            var width = +svg.getAttribute("width"), zoom = 1, ticks = svg.querySelector("g.axis");
            var moved = [];  // [element, attribute, its value at zoom 1, the element's x at zoom 1]
            svg.querySelectorAll("circle, line, rect, text.lat").forEach(function (e) {
              ["x", "cx", "x1", "x2"].forEach(function (name) { if (e.hasAttribute(name)) moved.push([e, name, +e.getAttribute(name)]); });
              if (e.hasAttribute("width")) moved.push([e, "width", +e.getAttribute("x") + +e.getAttribute("width"), +e.getAttribute("x")]);
            });
            function at(x) { return x < start ? x : start + (x - start) * zoom; }
            function fit() { return Math.max(0.01, (box.clientWidth - start) / (width - start)); }
            function apply(next, anchor) {
              var time = (box.scrollLeft + anchor - start) / zoom;
              zoom = Math.max(Math.min(1, fit()), Math.min(next, Math.max(1, (MAX_WIDTH - start) / (width - start))));
              svg.setAttribute("width", at(width));
              moved.forEach(function (m) { m[0].setAttribute(m[1], m[1] === "width" ? at(m[2]) - at(m[3]) : at(m[2])); });
              while (ticks.firstChild) ticks.removeChild(ticks.firstChild);
              var count = Math.max(4, Math.floor(plot * zoom / TICK));
              for (var i = 0; i <= count; i++) {
                var tick = document.createElementNS(SVG, "text");
                tick.setAttribute("x", at(start + plot * i / count));
                tick.setAttribute("text-anchor", i === 0 ? "start" : i === count ? "end" : "middle");
                tick.textContent = (span * i / count).toFixed(0) + " ms";
                ticks.appendChild(tick);
              }
              var kept = [];  // zoomed in, labels placed clear of each other stay clear
              svg.querySelectorAll("text.lat").forEach(function (t) {
                var x = +t.getAttribute("x"), y = +t.getAttribute("y"), w = t.getComputedTextLength();
                var clear = zoom >= 1 || kept.every(function (k) { return Math.abs(k[1] - y) >= 12 || x + w < k[0] || k[0] + k[2] < x; });
                t.style.visibility = clear ? "" : "hidden";
                if (clear) kept.push([x, y, w]);
              });
              box.scrollLeft = start + time * zoom - anchor;
              shown.textContent = Math.round(zoom * 100) + "%";
            }
            var bar = document.createElement("div"), shown = document.createElement("span");
            bar.className = "zoom";
            [["−", "zoom-out", "zoom out", function () { apply(zoom / STEP, box.clientWidth / 2); }],
             ["+", "zoom-in", "zoom in", function () { apply(zoom * STEP, box.clientWidth / 2); }],
             ["fit", "zoom-fit", "the whole run in the page's width", function () { apply(fit(), 0); }]].forEach(function (b) {
              var button = document.createElement("button");
              button.type = "button"; button.textContent = b[0]; button.className = b[1]; button.title = b[2];
              button.addEventListener("click", b[3]);
              bar.appendChild(button);
            });
            shown.textContent = "100%";
            bar.appendChild(shown);
            bar.appendChild(document.createTextNode(" · ctrl + wheel over the picture zooms around the pointer"));
            box.parentNode.insertBefore(bar, box);
            var names = svg.querySelector("g.names");
            box.addEventListener("scroll", function () { names.setAttribute("transform", "translate(" + box.scrollLeft + " 0)"); });
            box.addEventListener("wheel", function (e) {
              if (!e.ctrlKey) return;  // a plain wheel scrolls; ctrl is also what a trackpad pinch sends
              e.preventDefault();
              apply(zoom * Math.exp(-e.deltaY * (e.deltaMode === 1 ? 33 : 1) * 0.003), e.clientX - box.getBoundingClientRect().left);
            }, { passive: false });
          });
        })();
        </script>

        """

    static func color(for name: String) -> String {
        switch name {
        case "action": "#0969da"
        case "change", "delivery": "#1a7f37"
        case "output": "#1b7c83"
        case "render": "#8250df"
        case "warning", "error", "failure", "damaged", "cloud-reset", "history-lost", "write-failed": "#cf222e"
        case "exit": "#6e7781"
        case "upload", "stored", "applied", "cloud-change": "#0550ae"
        default: "#9a6700"
        }
    }

    /// Where one scenario's picture puts things. Time starts at the first
    /// step after the launches (start-up is squeezed into a narrow band on
    /// the left), and the width grows with what happened (the page scrolls sideways).
    struct Layout {
        let lanes: [String]
        /// The first step after the launches, and the last event.
        let first: UInt64, end: UInt64
        let startupWidth: Double, plotWidth: Double, totalWidth: Double, height: Double
        /// Milliseconds from `first` to `end`.
        let span: Double

        init(lanes: [String], events: [RecordedEvent]) {
            self.lanes = lanes
            first = events.first { $0.kind == .action && $0.name != "launch" }?.time ?? events.first?.time ?? 0
            end = max(events.map(\.time).max() ?? 1, first + 1)
            startupWidth = first > 0 ? 70.0 : 0
            span = Double(end - first) / 1e6
            // About 1.5 px per millisecond after start-up, at least the page's width.
            plotWidth = max(width - left - 20 - startupWidth, min(span * 1.5, 12_000))
            totalWidth = left + startupWidth + plotWidth + 20
            height = Double(lanes.count) * laneHeight + 30
        }

        func x(_ time: UInt64) -> Double {
            if time < first { return left + Double(time) / Double(max(first, 1)) * startupWidth }
            return left + startupWidth + Double(time - first) / Double(max(end - first, 1)) * plotWidth
        }

        func y(_ lane: String) -> Double { Double(lanes.firstIndex(of: lane) ?? 0) * laneHeight + laneHeight / 2 + 4 }

        func top(ofLane index: Int) -> Double { Double(index) * laneHeight + 4 }
    }

    /// The events a picture shows: those of its lanes, without responses and the role's own stderr.
    static func pictured(_ result: ScenarioResult) -> [RecordedEvent] {
        result.events.filter { $0.kind != .response && $0.kind != .stderr && result.lanes.contains($0.process) }
    }

    /// One scenario's picture: lanes, time axis, arrows, dots, then the lane
    /// names over everything; labels that would overprint are moved or left
    /// to the hover text, and arrows are drawn only where the cause is certain.
    static func svg(_ result: ScenarioResult) -> String {
        let events = pictured(result)
        let layout = Layout(lanes: result.lanes, events: events)
        var out =
            "<div class=\"scroll\"><svg width=\"\(Int(layout.totalWidth))\" height=\"\(Int(layout.height))\" "
            + "data-axis=\"\(left + layout.startupWidth) \(layout.plotWidth) \(layout.span)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        out += arrowMarkers + background(layout) + timeAxis(layout)
        out += arrows(events, scenario: result.scenario, layout)
        out += dots(events, layout) + laneNames(layout)
        return out + "</svg></div>\n" + latencySummary(result)
    }

    /// The arrowheads of the write → seen arrows (green) and of the iCloud hops (blue).
    static let arrowMarkers =
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1a7f37\"/></marker>"
        + "<marker id=\"cloud-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#0550ae\"/></marker></defs>\n"

    /// The lanes' bands, and the start-up band.
    static func background(_ layout: Layout) -> String {
        var out = ""
        for index in layout.lanes.indices {
            out +=
                "<rect class=\"lane\" x=\"0\" y=\"\(layout.top(ofLane: index))\" width=\"\(layout.totalWidth)\" height=\"\(laneHeight - 6)\" rx=\"4\"/>\n"
        }
        if layout.startupWidth > 0 {
            out += "<rect x=\"\(left)\" y=\"0\" width=\"\(layout.startupWidth)\" height=\"\(layout.height - 24)\" fill=\"#eaeef2\" opacity=\"0.7\"/>"
            out += "<text x=\"\(left + 4)\" y=\"\(layout.height - 4)\" fill=\"#57606a\">start-up</text>\n"
        }
        return out
    }

    /// The time axis, from the first step (the zoom script lays it out again at each scale).
    static func timeAxis(_ layout: Layout) -> String {
        let ticks = max(4, Int(layout.plotWidth / tickSpacing))
        var out = "<g class=\"axis\" fill=\"#57606a\" transform=\"translate(0 \(layout.height - 4))\">"
        for tick in 0...ticks {
            let time = layout.first + UInt64(Double(layout.end - layout.first) * Double(tick) / Double(ticks))
            let anchor = tick == 0 ? "start" : tick == ticks ? "end" : "middle"
            out += "<text x=\"\(layout.x(time))\" text-anchor=\"\(anchor)\">\(String(format: "%.0f ms", Double(time - layout.first) / 1e6))</text>"
        }
        return out + "</g>\n"
    }

    /// Every write → seen arrow, then every iCloud hop, with their latencies.
    static func arrows(_ events: [RecordedEvent], scenario: Scenario, _ layout: Layout) -> String {
        var labels = LabelPlacer()
        var out = ""
        for (pairs, colour, marker) in [
            (defaultsArrows(events), "#1a7f37", "arrow"), (cloudArrows(events, scenario: scenario), "#0550ae", "cloud-arrow"),
        ] {
            for (from, to) in pairs {
                out += arrow(
                    from: (layout.x(from.time), layout.y(from.process)), to: (layout.x(to.time), layout.y(to.process)),
                    latency: Double(to.time - from.time) / 1e6, colour: colour, marker: marker, labels: &labels)
            }
        }
        return out
    }

    /// One dot per event, its details in the hover text.
    static func dots(_ events: [RecordedEvent], _ layout: Layout) -> String {
        var out = ""
        for event in events {
            let name = event.kind == .action ? (event.name == "failure" ? "failure" : "action") : event.name
            let radius = event.kind == .action ? 5.0 : 4.0
            let since = event.time >= layout.first ? String(format: "%.2f ms", Double(event.time - layout.first) / 1e6) : "start-up"
            out += "<circle cx=\"\(layout.x(event.time))\" cy=\"\(layout.y(event.process))\" r=\"\(radius)\" fill=\"\(color(for: name))\">"
            out += "<title>\(since) \(escape(event.process)): \(escape(event.text))</title></circle>\n"
        }
        return out
    }

    /// The lane names last, over everything: the zoom script keeps them in view when the picture scrolls sideways.
    static func laneNames(_ layout: Layout) -> String {
        var out = "<g class=\"names\">"
        for (index, lane) in layout.lanes.enumerated() {
            let top = layout.top(ofLane: index)
            out += "<rect class=\"lane\" x=\"0\" y=\"\(top)\" width=\"\(left - 4)\" height=\"\(laneHeight - 6)\" rx=\"4\"/>"
            out += "<text class=\"label\" x=\"8\" y=\"\(top + laneHeight / 2)\">\(escape(lane))</text>"
        }
        return out + "</g>"
    }

    /// An arrow with its latency; the label goes where no other label is, or
    /// stays in the hover text.
    static func arrow(
        from: (Double, Double), to: (Double, Double), latency: Double, colour: String, marker: String,
        labels: inout LabelPlacer
    ) -> String {
        let text = String(format: "%.1f ms", latency)
        var out =
            "<line x1=\"\(from.0)\" y1=\"\(from.1)\" x2=\"\(to.0)\" y2=\"\(to.1)\" stroke=\"\(colour)\" stroke-opacity=\"0.55\" marker-end=\"url(#\(marker))\">"
        out += "<title>\(text)</title></line>"
        if let (lx, ly) = labels.place(near: ((from.0 + to.0) / 2 + 3, (from.1 + to.1) / 2 - 3), width: Double(text.count) * 6.6) {
            out += "<text class=\"lat\" x=\"\(lx)\" y=\"\(ly)\" fill=\"\(colour)\">\(text)</text>"
        }
        return out + "\n"
    }

    /// Where labels went, so the next one avoids them.
    struct LabelPlacer {
        var taken: [(x: Double, y: Double, width: Double)] = []

        mutating func place(near point: (Double, Double), width: Double) -> (Double, Double)? {
            for shift in [0.0, -12, 12, -24, 24] {
                let candidate = (point.0, point.1 + shift)
                let clear = taken.allSatisfy { abs($0.y - candidate.1) >= 12 || candidate.0 + width < $0.x || $0.x + $0.width < candidate.0 }
                if clear {
                    taken.append((candidate.0, candidate.1, width))
                    return candidate
                }
            }
            return nil
        }
    }

    /// A value change as a process saw it: a built-in role's change event, or
    /// an executable's observer delivery of one key (its changes are its deliveries).
    static func seenChange(_ event: RecordedEvent) -> (key: String, new: PlistValue?, origin: String)? {
        if let change = event.change { return (change.key, change.new, change.origin) }
        if case .delivery(let delivery)? = event.appEvent, let key = delivery.key { return (key, delivery.new, delivery.origin) }
        return nil
    }

    /// Each change seen in another process (a change event or an observer's
    /// delivery), with the write that caused it, only where the cause is
    /// certain: a write that carries the same value (the writer's own change
    /// event or delivery), or a write by an outside tool (which carries no
    /// value) that came before the change with no other write of the key in between.
    static func defaultsArrows(_ events: [RecordedEvent]) -> [(RecordedEvent, RecordedEvent)] {
        let ownWrites = events.filter { seenChange($0)?.origin == "this-process" }
        let toolWrites = events.filter { $0.kind == .action && $0.key != nil && $0.process == "defaults" }
        let setSteps = events.filter { $0.kind == .action && $0.name == "set" && $0.fields["value"] != nil }
        var arrows: [(RecordedEvent, RecordedEvent)] = []
        for seen in events {
            guard let change = seenChange(seen), change.origin == "other-process" else { continue }
            let key = change.key
            // The latest write of this very value before the change was seen. (A transaction's writer
            // reports its change only after its commit, sometimes after the reader: then no arrow, as
            // its time says nothing about the latency.)
            let byValue = ownWrites.filter { $0.process != seen.process && $0.key == key && seenChange($0)?.new == change.new }
            if let write = byValue.last(where: { $0.time <= seen.time }) {
                arrows.append((write, seen))
                continue
            }
            // Each process's lines are read by a thread of their own, so under load the writer's own change can be
            // recorded after the reader's. The runner's set step that made it, noted before the request was sent, is
            // then the certain cause.
            let requested = setSteps.last {
                $0.process != seen.process && $0.key == key && $0.fields["value"] == change.new && $0.time <= seen.time
            }
            // A writer killed right after its commit may never say so: then the step is the cause too,
            // unless an outside tool wrote the key in between.
            let writerSaidNothing =
                requested.map { step in !events.contains { $0.process == step.process && $0.time >= step.time && seenChange($0)?.key == key } }
                ?? false
            let toolBetween = requested.map { step in toolWrites.contains { $0.key == key && $0.time >= step.time && $0.time <= seen.time } } ?? true
            if let requested,
                byValue.contains(where: { $0.process == requested.process && $0.time >= requested.time }) || (writerSaidNothing && !toolBetween)
            {
                arrows.append((requested, seen))
                continue
            }
            if byValue.contains(where: { $0.time > seen.time }) { continue }
            guard let tool = toolWrites.last(where: { $0.key == key && $0.time <= seen.time }) else { continue }
            let between = ownWrites.contains { $0.key == key && $0.time > tool.time && $0.time <= seen.time }
            if !between { arrows.append((tool, seen)) }
        }
        return arrows
    }

    /// The latencies of a scenario's arrows, in a line under its picture.
    static func latencySummary(_ result: ScenarioResult) -> String {
        let events = pictured(result)
        func describe(_ name: String, _ pairs: [(RecordedEvent, RecordedEvent)]) -> String? {
            let latencies = pairs.map { Double($0.1.time - $0.0.time) / 1e6 }.sorted()
            guard !latencies.isEmpty else { return nil }
            return String(format: "\(name): %d, median %.1f ms, max %.1f ms", latencies.count, latencies[latencies.count / 2], latencies.last!)
        }
        let parts = [
            describe("changes seen in other processes", defaultsArrows(events)),
            describe("iCloud hops", cloudArrows(events, scenario: result.scenario)),
        ].compactMap { $0 }
        return parts.isEmpty ? "" : "<div class=\"summary\">latencies — \(parts.joined(separator: "; "))</div>\n"
    }

    static func distance(_ a: UInt64, _ b: UInt64) -> UInt64 { a > b ? a - b : b - a }

    /// The trip of an iCloud write, hop by hop: the write in an app (or its
    /// bridge's defaults change) → its device's agent uploading the key → the
    /// cloud storing it → the other devices' agents applying it → their apps'
    /// notification naming it.
    /// Each arrow goes from the latest earlier event of the previous hop that
    /// names the same key on the right device.
    static func cloudArrows(_ events: [RecordedEvent], scenario: Scenario) -> [(RecordedEvent, RecordedEvent)] {
        func device(of lane: String) -> String? {
            lane.hasPrefix("sync ") ? String(lane.dropFirst(5)) : scenario.processes[lane]?.device
        }
        func keys(_ event: RecordedEvent) -> [String] {
            if case .cloudChange(_, let keys)? = event.appEvent { return keys }
            return (event.fields["keys"]?.arrayValue ?? []).compactMap(\.stringValue)
        }
        func latest(before event: RecordedEvent, key: String, where accept: (RecordedEvent) -> Bool) -> RecordedEvent? {
            events.last { $0.time <= event.time && accept($0) && ($0.key == key || keys($0).contains(key)) }
        }
        var arrows: [(RecordedEvent, RecordedEvent)] = []
        for event in events where event.kind == .event {
            let lane = event.process
            switch event.name {
            case "upload":
                guard lane.hasPrefix("sync "), let key = keys(event).first else { continue }
                let source = latest(before: event, key: key) { candidate in
                    device(of: candidate.process) == device(of: lane) && !candidate.process.hasPrefix("sync ")
                        && (candidate.kind == .action || candidate.change?.origin == "this-process")
                }
                if let source { arrows.append((source, event)) }
            case "stored":
                guard let key = keys(event).first, let writer = event.fields["device"]?.stringValue else { continue }
                let source = latest(before: event, key: key) { $0.name == "upload" && $0.process == "sync \(writer)" }
                if let source { arrows.append((source, event)) }
            case "applied":
                guard lane.hasPrefix("sync "), let key = keys(event).first else { continue }
                let source = latest(before: event, key: key) { $0.name == "stored" && $0.fields["device"]?.stringValue != device(of: lane) }
                if let source { arrows.append((source, event)) }
            case "cloud-change":
                guard let key = keys(event).first else { continue }
                let source = latest(before: event, key: key) { $0.name == "applied" && device(of: $0.process) == device(of: lane) }
                if let source { arrows.append((source, event)) }
            default:
                continue
            }
        }
        return arrows
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
