import Foundation
import ScenarioModel
import SimulationValues
import SpecFormat
import Testing

/// A scenario's device declaration gives the device's platform and
/// preferences cache; a bad value is refused at its line and column.
@Suite struct DeviceSettingsParsingTests {
    func parse(_ devices: String) throws -> Scenario {
        try ScenarioParser.parse(
            "name: t\nsummary: s\ndevices:\n\(devices)\nprocesses:\n  app: { role: main-app }\nsteps:\n  - launch: app\n", file: "/t.yaml",
            fileSystem: FixedScenarioFiles())
    }

    @Test func platformsAndTheCacheAreRead() throws {
        let scenario = try parse(
            "  - AppleTV: { platform: tvOS }\n  - Mac: { platform: macos }\n  - Desk: { platform: macOS, preferences-cache: false }\n  - iPhone")
        #expect(
            scenario.deviceSpecs.map(\.settings) == [
                DeviceSettings(platform: .tvOS, preferencesCache: false), DeviceSettings(platform: .macOS, preferencesCache: true),
                DeviceSettings(platform: .macOS, preferencesCache: false), DeviceSettings(platform: .iOS, preferencesCache: false),
            ])
        #expect(!scenario.usesCloud)
    }

    @Test func badValuesAreRefusedWhereTheyAre() throws {
        do {
            _ = try parse("  - AppleTV: { platform: android }")
            Issue.record("an unknown platform was accepted")
        } catch let error as SpecError {
            #expect("\(error.line):\(error.column)" == "4:26")
            #expect(
                error.message.contains("unknown platform \"android\"; use one of iOS, iPadOS, macOS, tvOS, watchOS, visionOS"), "\(error.message)")
        }
        do {
            _ = try parse("  - Mac: { preferences-cache: sometimes }")
            Issue.record("a cache that is not a boolean was accepted")
        } catch let error as SpecError {
            #expect(error.line == 4, "\(error.message)")
        }
    }
}
