import AppProtocol
import Foundation
import PropertyList

/// A self-contained HTML picture of runs: one lane per process, events in
/// time, and an arrow from each write to every process where it was seen,
/// labelled with the latency. Hover a dot for the event's details.
public enum TimelineReport {
    static let laneHeight = 56.0
    static let left = 170.0
    static let width = 1100.0

    public static func render(_ results: [ScenarioResult]) -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>groupsim run timeline</title>
            <style>
            body { font: 14px -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1d1d1f; }
            h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 32px; }
            .pass { color: #1a7f37; } .fail { color: #cf222e; }
            .summary { color: #57606a; margin: 4px 0 8px; } .failure { background: #ffebe9; padding: 8px; border-radius: 6px; white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 12px; }
            svg text { font-size: 11px; font-family: ui-monospace, monospace; } .lane { fill: #f6f8fa; } .label { font-size: 12px; font-weight: 600; }
            .legend span { display: inline-block; margin-right: 14px; } .dot { display: inline-block; width: 10px; height: 10px; border-radius: 5px; margin-right: 4px; vertical-align: middle; }
            </style></head><body>
            <h1>groupsim run — \(results.filter(\.passed).count) passed, \(results.filter { !$0.passed }.count) failed</h1>
            <div class="legend">
            """
        for (name, color) in [("runner action / write", color(for: "action")), ("change seen", color(for: "change")), ("widget render", color(for: "render")),
                              ("warning / error", color(for: "warning")), ("exit", color(for: "exit")),
                              ("ready / notification / result", color(for: "ready"))] {
            html += "<span><i class=\"dot\" style=\"background:\(color)\"></i>\(name)</span>"
        }
        html += "<span>→ write to where it was seen, with latency</span>"
        html += "<span style=\"color:#0550ae\">→ iCloud: app write → upload → other device's agent → its app</span></div>\n"
        for (index, result) in results.enumerated() {
            html += "<h2 id=\"s\(index)\"><span class=\"\(result.passed ? "pass" : "fail")\">\(result.passed ? "✔" : "✘")</span> \(escape(result.scenario.name)) "
            html += "<small>(\(String(format: "%.2f", result.duration)) s)</small></h2>\n"
            html += "<div class=\"summary\">\(escape(result.scenario.summary)) — <code>\(escape(result.scenario.file))</code></div>\n"
            if let failure = result.failure {
                html += "<div class=\"failure\">line \(failure.line): \(escape(failure.step))\n\(escape(failure.message))</div>\n"
            }
            html += svg(result)
        }
        html += "</body></html>\n"
        return html
    }

    static func color(for name: String) -> String {
        switch name {
        case "action": "#0969da"
        case "change": "#1a7f37"
        case "render": "#8250df"
        case "warning", "error", "failure": "#cf222e"
        case "exit": "#6e7781"
        case "upload", "stored", "applied", "cloud-change": "#0550ae"
        default: "#9a6700"
        }
    }

    static func svg(_ result: ScenarioResult) -> String {
        let lanes = result.lanes
        let events = result.events.filter { $0.kind != .response && $0.kind != .stderr && lanes.contains($0.process) }
        let end = max(Double(events.map(\.time).max() ?? 1), 1)
        let height = Double(lanes.count) * laneHeight + 30
        func x(_ time: UInt64) -> Double { left + Double(time) / end * (width - left - 20) }
        func y(_ lane: String) -> Double { Double(lanes.firstIndex(of: lane) ?? 0) * laneHeight + laneHeight / 2 + 4 }
        var out = "<svg width=\"\(Int(width))\" height=\"\(Int(height))\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        out += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1a7f37\"/></marker>"
            + "<marker id=\"cloud-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#0550ae\"/></marker></defs>\n"
        for (index, lane) in lanes.enumerated() {
            let top = Double(index) * laneHeight + 4
            out += "<rect class=\"lane\" x=\"0\" y=\"\(top)\" width=\"\(width)\" height=\"\(laneHeight - 6)\" rx=\"4\"/>"
            out += "<text class=\"label\" x=\"8\" y=\"\(top + laneHeight / 2)\">\(escape(lane))</text>\n"
        }
        // Time axis.
        let axis = height - 12
        for tick in 0...4 {
            let time = UInt64(end * Double(tick) / 4)
            let anchor = tick == 0 ? "start" : tick == 4 ? "end" : "middle"
            out += "<text x=\"\(x(time))\" y=\"\(axis + 8)\" text-anchor=\"\(anchor)\" fill=\"#57606a\">\(String(format: "%.0f ms", Double(time) / 1e6))</text>"
        }
        // Arrows: each change seen from elsewhere, from the latest earlier write
        // of that key in another lane: where the writer made the change (its own
        // this-process change event), else the runner's action (an outside tool).
        let writes = events.filter {
            ($0.change?.origin == "this-process")
                || ($0.kind == .action && $0.key != nil && $0.process == "defaults")
        }
        for seen in events where seen.change?.origin == "other-process" {
            guard let key = seen.key else { continue }
            // The write of this key (and value, when known) nearest in time. A
            // transaction's writer reports its own change only after its
            // commit, so it may reach the runner just after the reader's.
            let candidates = writes.filter {
                $0.process != seen.process && $0.key == key && ($0.change == nil || $0.change?.new == seen.change?.new)
            }
            guard let write = candidates.min(by: { distance($0.time, seen.time) < distance($1.time, seen.time) }) else { continue }
            let latency = seen.time >= write.time ? String(format: "%.1f ms", Double(seen.time - write.time) / 1e6) : "≈0 ms"
            let (x1, y1, x2, y2) = (x(write.time), y(write.process), x(seen.time), y(seen.process))
            out += "<line x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x2)\" y2=\"\(y2)\" stroke=\"#1a7f37\" stroke-opacity=\"0.55\" marker-end=\"url(#arrow)\"/>"
            out += "<text x=\"\((x1 + x2) / 2 + 3)\" y=\"\((y1 + y2) / 2 - 3)\" fill=\"#1a7f37\">\(latency)</text>\n"
        }
        for (from, to) in cloudArrows(events, scenario: result.scenario) {
            let latency = String(format: "%.1f ms", Double(to.time - from.time) / 1e6)
            let (x1, y1, x2, y2) = (x(from.time), y(from.process), x(to.time), y(to.process))
            out += "<line x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x2)\" y2=\"\(y2)\" stroke=\"#0550ae\" stroke-opacity=\"0.55\" marker-end=\"url(#cloud-arrow)\"/>"
            out += "<text x=\"\((x1 + x2) / 2 + 3)\" y=\"\((y1 + y2) / 2 - 3)\" fill=\"#0550ae\">\(latency)</text>\n"
        }
        for event in events {
            let name = event.kind == .action ? (event.name == "failure" ? "failure" : "action") : event.name
            let radius = event.kind == .action ? 5.0 : 4.0
            out += "<circle cx=\"\(x(event.time))\" cy=\"\(y(event.process))\" r=\"\(radius)\" fill=\"\(color(for: name))\">"
            out += "<title>\(String(format: "%.2f ms", Double(event.time) / 1e6)) \(escape(event.process)): \(escape(event.text))</title></circle>\n"
        }
        return out + "</svg>\n"
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
