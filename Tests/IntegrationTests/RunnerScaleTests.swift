import Foundation
import TestSupport
import Testing

/// The suite split across machines (`--shard`) and run several at a time
/// (`--jobs`): every scenario runs exactly once either way.
@Suite struct RunnerScaleTests {
    let root = TemporaryRoot()

    func run(_ arguments: [String]) throws -> ProcessResult {
        let tmp = root.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        return try runBounded(BuiltExecutable.path("groupsim"), ["run"] + arguments, environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 300)
    }

    /// The repository's scenarios folder (the tests run from the package root).
    var scenarios: String { FileManager.default.currentDirectoryPath + "/scenarios" }

    func names(_ listing: String) -> [String] {
        listing.split(separator: "\n").map { String($0.split(separator: " ").first ?? "") }.filter { !$0.isEmpty }
    }

    @Test func shardsCoverTheSuiteOnceBetweenThem() throws {
        let all = names(try run(["--list", scenarios]).stdout).sorted()
        #expect(all.count > 10)
        var seen: [String] = []
        for index in 1...3 {
            let result = try run(["--list", "--shard", "\(index)/3", scenarios])
            #expect(result.status == 0, "\(result.stderr)")
            seen += names(result.stdout)
        }
        #expect(seen.sorted() == all)
        // One scenario, two shards: the second has nothing to run, and that is not a failure.
        let empty = try run(["--shard", "2/2", "--filter", "global-domain", scenarios])
        #expect(empty.status == 0 && empty.stdout.contains("shard 2/2 has no scenario to run"), "\(empty.stdout)\(empty.stderr)")
        for wrong in ["0/3", "4/3", "2", "a/b", "1/0"] {
            let result = try run(["--list", "--shard", wrong, scenarios])
            #expect(result.status != 0 && result.stderr.contains("--shard takes I/N"), "\(wrong): \(result.stderr)")
        }
    }

    @Test func jobsRunEveryScenarioOnceAndReportInOrder() throws {
        let filters = ["--filter", "launch-argument", "--filter", "atomic-increment", "--filter", "write-reaches"]
        let result = try run(["--jobs", "3", "--junit", root.path + "/report.xml"] + filters + [scenarios])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("scenarios: 3 passed, 0 failed") && result.stdout.contains("(3 at a time)"), "\(result.stdout)")
        let report = try String(contentsOfFile: root.path + "/report.xml", encoding: .utf8)
        let listed = names(try run(["--list"] + filters + [scenarios]).stdout)
        let order = listed.compactMap { report.range(of: "\"\($0)\"")?.lowerBound }
        #expect(listed.count == 3 && order.count == 3 && order == order.sorted(), "the report keeps the suite's order: \(listed)")
        #expect(try run(["--jobs", "0", scenarios]).stderr.contains("--jobs must be from 1 to 64"))
    }

    @Test func theShardsReportsMergeIntoOne() throws {
        let filters = ["--filter", "launch-argument", "--filter", "atomic-increment", "--filter", "global-domain", "--filter", "same-value"]
        for index in 1...2 {
            let shard = try run(["--shard", "\(index)/2", "--junit", root.path + "/shard\(index).xml"] + filters + [scenarios])
            #expect(shard.status == 0, "\(shard.stdout)")
        }
        let merged = try run([
            "--merge-junit", root.path + "/shard1.xml", "--merge-junit", root.path + "/shard2.xml", "--junit", root.path + "/all.xml",
        ])
        #expect(merged.status == 0, "\(merged.stderr)")
        let report = try String(contentsOfFile: root.path + "/all.xml", encoding: .utf8)
        #expect(report.contains("<testsuites tests=\"4\" failures=\"0\""), "\(report)")
        #expect(report.components(separatedBy: "<testcase ").count - 1 == 4)
        try "not a report".write(toFile: root.path + "/other.xml", atomically: true, encoding: .utf8)
        let refused = try run(["--merge-junit", root.path + "/other.xml", "--junit", root.path + "/x.xml"])
        #expect(refused.status != 0 && refused.stderr.contains("is not a groupsim run --junit report"), "\(refused.stderr)")
    }

    /// A passing test case that kept a process's output is `<testcase …>`, its
    /// `<system-out>` and `</testcase>`: shards whose last case is one merge too.
    @Test func reportsWithProcessOutputMerge() throws {
        let shard = try run(["--filter", "exec-interactive-tool", "--junit", root.path + "/output.xml", scenarios])
        #expect(shard.status == 0, "\(shard.stdout)\(shard.stderr)")
        let merged = try run(["--merge-junit", root.path + "/output.xml", "--junit", root.path + "/merged.xml"])
        #expect(merged.status == 0, "\(merged.stderr)")
        let report = try String(contentsOfFile: root.path + "/merged.xml", encoding: .utf8)
        #expect(report.contains("<testsuites tests=\"1\" failures=\"0\""), "\(report)")
        #expect(report.contains("<system-out>") && report.contains("</testcase>\n  </testsuite>"), "\(report)")
    }
}
