import CloudDevice
import CloudModel
import Foundation
import ScenarioModel
import Testing

/// Each bound is defined once (NetworkAction, in CloudModel): the CLI's
/// `groupsim cloud network` and a scenario's steps accept the same range.
@Suite struct ScenarioLimitsTests {
    func parse(_ step: String) throws -> Scenario {
        try ScenarioParser.parse(
            "summary: x\ndevices: [iPhone, iPad]\nsteps:\n  - \(step)\n", file: "/tmp/limits.yaml", fileSystem: FixedScenarioFiles())
    }

    @Test func clockSkewIsTenYearsEitherWayForTheCLIAndScenarios() throws {
        let tenYears = Int64(10 * 365 * 86_400_000)
        #expect(NetworkAction.skewRange == -tenYears...tenYears)
        #expect(DeviceCloudSettings.maximumClockSkewMilliseconds == tenYears)
        #expect(try NetworkAction("skew", tenYears) == .skew(milliseconds: tenYears))
        #expect(throws: CloudFormatError.self) { try NetworkAction("skew", tenYears + 1) }
        #expect(throws: CloudFormatError.self) { try NetworkAction("skew", -tenYears - 1) }
        _ = try parse("clock-skew: { device: iPad, ms: \(-tenYears) }")
        _ = try parse("expect: { cloud: s, account: alice, key: k, value: 1, ahead-ms: \(tenYears) }")
        #expect(throws: (any Error).self) { try parse("clock-skew: { device: iPad, ms: \(tenYears + 1) }") }
    }

    @Test func pushCountsAndLatencyShareTheCloudsBounds() throws {
        _ = try parse("network: { device: iPad, drop-pushes: \(NetworkAction.pushCountRange.upperBound) }")
        #expect(throws: (any Error).self) { try parse("network: { device: iPad, duplicate-pushes: \(NetworkAction.pushCountRange.upperBound + 1) }") }
        _ = try parse("network: { device: iPad, latency-ms: \(NetworkAction.latencyRange.upperBound) }")
        #expect(throws: (any Error).self) { try parse("network: { device: iPad, latency-ms: \(NetworkAction.latencyRange.upperBound + 1) }") }
        #expect(throws: CloudFormatError.self) { try NetworkAction("latency", NetworkAction.latencyRange.upperBound + 1) }
    }

    @Test func uploadIntervalAndTheFirstDownloadRuleAreCheckedWhereWritten() throws {
        _ = try parse("upload-interval: { device: iPad, ms: \(NetworkAction.uploadIntervalRange.upperBound) }")
        #expect(throws: (any Error).self) { try parse("upload-interval: { device: iPad, ms: -1 }") }
        #expect(throws: (any Error).self) { try parse("upload-interval: { device: iPda, ms: 10 }") }
        func device(_ fields: String) throws -> Scenario {
            try ScenarioParser.parse(
                "summary: x\ndevices:\n  - iPad: { \(fields) }\nsteps:\n  - wait-cloud:\n", file: "/tmp/d.yaml", fileSystem: FixedScenarioFiles())
        }
        #expect(try device("upload-interval-ms: 3000").deviceSpecs.first?.uploadIntervalMilliseconds == 3000)
        #expect(try device("writes-before-first-download: kept").deviceSpecs.first?.keepsWritesBeforeFirstDownload == true)
        let error = #expect(throws: (any Error).self) { try device("writes-before-first-download: keep") }
        #expect("\(error!)".contains("d.yaml:3:") && "\(error!)".contains("'overwritten'"), "\(error!)")
    }
}
