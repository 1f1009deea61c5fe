import Foundation
import PropertyList
import ScenarioModel
import Terminal

/// The human report: progress while running, and for a failure what was
/// expected, what each process saw, and the events around it.
package struct TextReport: Sendable {
    let style: TerminalStyle

    package init(style: TerminalStyle) { self.style = style }

    package func started(_ scenario: Scenario, run: Int, of runs: Int) -> String {
        "\(style.dim("▶")) \(scenario.name)" + (runs > 1 ? style.dim(" (run \(run)/\(runs))") : "")
    }

    package func finished(_ result: ScenarioResult) -> String {
        let time = style.dim(String(format: "(%.2f s)", result.duration))
        guard let failure = result.failure else { return "\(style.highlight("✔")) \(result.scenario.name) \(time)" }
        return "\(style.error("✘")) \(result.scenario.name) \(time)\n" + details(result, failure)
    }

    func details(_ result: ScenarioResult, _ failure: ScenarioRunError) -> String {
        var lines = [
            "    \(result.scenario.file):\(failure.line): \(style.bold(failure.step))",
            "    \(style.error(failure.message))",
        ]
        let failedAt = result.events.last(where: { $0.name == "failure" })?.time ?? result.events.last?.time ?? 0
        lines.append("    what each process saw (last events before the failure):")
        for lane in result.lanes {
            let seen = result.events.filter { $0.process == lane && $0.time <= failedAt && $0.kind != .response }.suffix(6)
            lines.append("      \(style.bold(lane)):" + (seen.isEmpty ? " nothing" : ""))
            for event in seen {
                let text = event.kind == .output ? ProcessRecord.State.shortened(event.text) : event.text
                lines.append("        \(Self.stamp(event.time))  \(event.kind == .action ? "» " : "")\(text)")
            }
        }
        let after = result.events.filter { $0.time > failedAt && $0.kind == .event }.prefix(4)
        let teardown = result.events.first { $0.kind == .action && $0.process == "runner" && $0.name == "teardown" }?.time
        if !after.isEmpty {
            lines.append("    events after the failure:")
            for event in after {
                let cause = teardown.map { event.time >= $0 } == true ? "  (the runner's teardown)" : ""
                lines.append("      \(Self.stamp(event.time))  \(event.process): \(event.text)\(cause)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func stamp(_ nanoseconds: UInt64) -> String { String(format: "%8.2f ms", Double(nanoseconds) / 1e6) }
}

/// JUnit XML for CI.
package enum JUnitReport {
    package static func render(_ results: [ScenarioResult]) -> String {
        let failures = results.filter { !$0.passed }.count
        let total = results.reduce(0) { $0 + $1.duration }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites tests=\"\(results.count)\" failures=\"\(failures)\" time=\"\(String(format: "%.3f", total))\">\n"
        xml +=
            "  <testsuite name=\"groupsim scenarios\" tests=\"\(results.count)\" failures=\"\(failures)\" time=\"\(String(format: "%.3f", total))\">\n"
        for result in results {
            xml +=
                "    <testcase classname=\"\(escape(result.scenario.file))\" name=\"\(escape(result.scenario.name))\" time=\"\(String(format: "%.3f", result.duration))\""
            let output = systemOut(result)
            if let failure = result.failure {
                let detail = TextReport(style: TerminalStyle(enabled: false)).details(result, failure)
                xml += ">\n      <failure message=\"\(escape(failure.message))\">\(escape(detail))</failure>\n\(output)    </testcase>\n"
            } else if !output.isEmpty {
                xml += ">\n\(output)    </testcase>\n"
            } else {
                xml += "/>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// At most this much of the processes' output goes into one test case's `system-out`.
    static let maximumSystemOut = 1 << 20

    /// The output of the run's user executables (as the runner kept it), one
    /// "process [stream] line" each; "" when they wrote nothing.
    static func systemOut(_ result: ScenarioResult) -> String {
        var text = ""
        var left = 0
        for event in result.events where event.kind == .output {
            // XML 1.0 has no place for control characters (a terminal's colour codes, say).
            let printable = String(String.UnicodeScalarView(event.text.unicodeScalars.filter { $0.value >= 0x20 || $0 == "\t" }))
            let line = "\(event.process) [\(event.fields["stream"]?.stringValue ?? "?")] \(printable)\n"
            if text.utf8.count + line.utf8.count > maximumSystemOut {
                left += 1
                continue
            }
            text += line
        }
        if left > 0 { text += "(\(left) more lines left out: a test case's output is bounded to \(maximumSystemOut) bytes)\n" }
        return text.isEmpty ? "" : "      <system-out>\(escape(text))</system-out>\n"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// One report of the test cases of several (the shards of a CI matrix),
    /// in the order given. Only reports this type wrote are read.
    package static func merge(_ reports: [(path: String, text: String)]) throws -> String {
        var cases: [String] = []
        for report in reports {
            guard report.text.contains("<testsuite name=\"groupsim scenarios\"") else {
                throw ScenarioRunError.merge("\(report.path) is not a groupsim run --junit report")
            }
            var rest = Substring(report.text)
            while let start = rest.range(of: "    <testcase ") {
                let tail = rest[start.lowerBound...]
                guard let open = tail.range(of: ">\n") else {
                    throw ScenarioRunError.merge("\(report.path): a test case is not closed")
                }
                // Either `<testcase …/>` or `<testcase …>…</testcase>` (a failure, or kept output), whichever
                // line ends first; the last case of a report may have no `/>` after it at all.
                let end: String.Index
                if let close = tail.range(of: "/>\n"), close.lowerBound <= open.lowerBound {
                    end = close.upperBound
                } else if let closing = tail.range(of: "</testcase>\n") {
                    end = closing.upperBound
                } else {
                    throw ScenarioRunError.merge("\(report.path): a test case has no </testcase>")
                }
                cases.append(String(tail[..<end]))
                rest = tail[end...]
            }
        }
        let failures = cases.filter { $0.contains("<failure ") }.count
        let total = cases.reduce(0.0) { sum, item in
            guard let range = item.range(of: #"time="([0-9.]+)""#, options: .regularExpression) else { return sum }
            return sum + (Double(item[range].dropFirst(6).dropLast()) ?? 0)
        }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites tests=\"\(cases.count)\" failures=\"\(failures)\" time=\"\(String(format: "%.3f", total))\">\n"
        xml +=
            "  <testsuite name=\"groupsim scenarios\" tests=\"\(cases.count)\" failures=\"\(failures)\" time=\"\(String(format: "%.3f", total))\">\n"
        xml += cases.joined()
        return xml + "  </testsuite>\n</testsuites>\n"
    }
}

/// Machine-readable results: one object per run, with every recorded event.
package enum JSONReport {
    package static func render(_ results: [ScenarioResult]) -> String {
        let runs = results.map { result -> String in
            let events = result.events.map { event in
                "{\"t_ms\":\(String(format: "%.3f", Double(event.time) / 1e6)),\"process\":\(PlistJSON.quote(event.process)),"
                    + "\"kind\":\"\(event.kind.rawValue)\",\"name\":\(PlistJSON.quote(event.name)),\"text\":\(PlistJSON.quote(event.text)),"
                    + "\"fields\":\(PlistJSON.encode(.dictionary(event.fields)))}"
            }
            let failure =
                result.failure.map {
                    "{\"line\":\($0.line),\"step\":\(PlistJSON.quote($0.step)),\"message\":\(PlistJSON.quote($0.message))}"
                } ?? "null"
            return "{\"name\":\(PlistJSON.quote(result.scenario.name)),\"file\":\(PlistJSON.quote(result.scenario.file)),"
                + "\"summary\":\(PlistJSON.quote(result.scenario.summary)),\"passed\":\(result.passed),"
                + "\"duration_s\":\(String(format: "%.3f", result.duration)),\"failure\":\(failure),\"events\":[\(events.joined(separator: ","))]}"
        }
        return "{\"runs\":[\n" + runs.joined(separator: ",\n") + "\n]}\n"
    }
}
