import Foundation

/// How a cost grows with the work: a few measured series over one axis,
/// written as a Markdown table (to read), an SVG chart (to look at), and the
/// order of growth of each series (the slope on log–log axes, between the
/// first and the last point).
struct CostCurve {
    struct Series {
        let name: String
        var points: [(x: Double, y: Double)]
    }

    let title: String
    let xLabel: String
    let yLabel: String
    var series: [Series]

    /// The exponent k of y ∝ x^k over the series' last step (its two largest
    /// sizes): 1 is linear, 0 flat. The last step, not the whole range: at
    /// small sizes a fixed cost (process wake-ups, fsyncs) hides the growth.
    static func exponent(_ points: [(x: Double, y: Double)]) -> Double? {
        guard points.count >= 2 else { return nil }
        let (before, last) = (points[points.count - 2], points[points.count - 1])
        guard before.x > 0, last.x > before.x, before.y > 0, last.y > 0 else { return nil }
        return log(last.y / before.y) / log(last.x / before.x)
    }

    /// "flat", "about linear", … for an exponent.
    static func growth(_ exponent: Double?) -> String {
        guard let exponent else { return "—" }
        let named =
            switch exponent {
            case ..<(-0.15): "falls"
            case ..<0.15: "flat"
            case ..<0.6: "sublinear"
            case ..<1.25: "about linear"
            case ..<1.6: "worse than linear"
            default: "about quadratic or worse"
            }
        return "\(named) (x^\(String(format: "%.2f", exponent)))"
    }

    var markdown: String {
        let xs = Array(Set(series.flatMap { $0.points.map(\.x) })).sorted()
        var lines = ["| \(xLabel) | " + series.map(\.name).joined(separator: " | ") + " |"]
        lines.append("|---:|" + String(repeating: "---:|", count: series.count))
        for x in xs {
            let cells = series.map { line in line.points.first { $0.x == x }.map { Self.format($0.y) } ?? "—" }
            lines.append("| \(Self.format(x)) | " + cells.joined(separator: " | ") + " |")
        }
        lines.append("| growth (last step) | " + series.map { Self.growth(Self.exponent($0.points)) }.joined(separator: " | ") + " |")
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value >= 100 ? String(format: "%.0f", value) : value >= 1 ? String(format: "%.2f", value) : String(format: "%.3f", value)
    }

    // MARK: The chart

    private static let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    private static let width = 640.0
    private static let height = 400.0
    private static let margin = (left: 70.0, right: 170.0, top: 40.0, bottom: 50.0)

    /// A line chart with logarithmic axes (both grow by orders of magnitude),
    /// each series in its own colour, named in a legend.
    var svg: String {
        let points = series.flatMap(\.points).filter { $0.x > 0 && $0.y > 0 }
        guard let minX = points.map(\.x).min(), let maxX = points.map(\.x).max(), let minY = points.map(\.y).min(),
            let maxY = points.map(\.y).max()
        else { return "<svg xmlns=\"http://www.w3.org/2000/svg\"/>" }
        let xRange = Self.decades(minX, maxX)
        let yRange = Self.decades(minY, maxY)
        let plotWidth = Self.width - Self.margin.left - Self.margin.right
        let plotHeight = Self.height - Self.margin.top - Self.margin.bottom
        func px(_ x: Double) -> Double { Self.margin.left + (log10(x) - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * plotWidth }
        func py(_ y: Double) -> Double {
            Self.margin.top + plotHeight - (log10(y) - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound) * plotHeight
        }
        var body: [String] = [
            "<rect width=\"\(Self.width)\" height=\"\(Self.height)\" fill=\"white\"/>",
            "<text x=\"\(Self.width / 2)\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">\(Self.escape(title))</text>",
        ]
        body += Self.gridLines(range: xRange, ticks: [minX, maxX] + points.map(\.x)) { value, label in
            let x = px(value)
            return
                "<line x1=\"\(x)\" y1=\"\(Self.margin.top)\" x2=\"\(x)\" y2=\"\(Self.margin.top + plotHeight)\" stroke=\"#ddd\"/>"
                + "<text x=\"\(x)\" y=\"\(Self.margin.top + plotHeight + 16)\" text-anchor=\"middle\" font-size=\"11\">\(label)</text>"
        }
        body += Self.gridLines(range: yRange, ticks: Self.powers(of: yRange)) { value, label in
            let y = py(value)
            return
                "<line x1=\"\(Self.margin.left)\" y1=\"\(y)\" x2=\"\(Self.margin.left + plotWidth)\" y2=\"\(y)\" stroke=\"#ddd\"/>"
                + "<text x=\"\(Self.margin.left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\" font-size=\"11\">\(label)</text>"
        }
        body.append(
            "<text x=\"\(Self.margin.left + plotWidth / 2)\" y=\"\(Self.height - 12)\" text-anchor=\"middle\" font-size=\"12\">\(Self.escape(xLabel)) (log)</text>"
        )
        body.append(
            "<text transform=\"translate(16 \(Self.margin.top + plotHeight / 2)) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">\(Self.escape(yLabel)) (log)</text>"
        )
        for (index, line) in series.enumerated() {
            let colour = Self.colours[index % Self.colours.count]
            let drawn = line.points.filter { $0.x > 0 && $0.y > 0 }
            let path = drawn.map { "\(String(format: "%.1f", px($0.x))),\(String(format: "%.1f", py($0.y)))" }.joined(separator: " ")
            body.append("<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" points=\"\(path)\"/>")
            for point in drawn { body.append("<circle cx=\"\(px(point.x))\" cy=\"\(py(point.y))\" r=\"3\" fill=\"\(colour)\"/>") }
            let legendY = Self.margin.top + 10 + Double(index) * 18
            let legendX = Self.width - Self.margin.right + 12
            body.append(
                "<line x1=\"\(legendX)\" y1=\"\(legendY)\" x2=\"\(legendX + 18)\" y2=\"\(legendY)\" stroke=\"\(colour)\" stroke-width=\"2\"/>"
                    + "<text x=\"\(legendX + 24)\" y=\"\(legendY + 4)\" font-size=\"11\">\(Self.escape(line.name))</text>")
        }
        return
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(Self.width))\" height=\"\(Int(Self.height))\" font-family=\"sans-serif\">\n"
            + body.joined(separator: "\n") + "\n</svg>\n"
    }

    /// log10 bounds widened to whole or half decades around the values.
    private static func decades(_ low: Double, _ high: Double) -> ClosedRange<Double> {
        let lower = (log10(low) * 2).rounded(.down) / 2
        var upper = (log10(high) * 2).rounded(.up) / 2
        if upper <= lower { upper = lower + 0.5 }
        return lower...upper
    }

    /// 1, 2 and 5 times each power of ten within the range: a few labelled lines per decade.
    private static func powers(of range: ClosedRange<Double>) -> [Double] {
        stride(from: range.lowerBound.rounded(.down), through: range.upperBound, by: 1).flatMap { decade in
            [1.0, 2, 5].map { $0 * pow(10, decade) }
        }.filter { range.contains(log10($0)) }
    }

    private static func gridLines(range: ClosedRange<Double>, ticks: [Double], _ draw: (Double, String) -> String) -> [String] {
        Array(Set(ticks)).sorted().filter { range.contains(log10($0)) }.map { draw($0, format($0)) }
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
