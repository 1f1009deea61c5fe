import AppInstall
import AppModel
import ArgumentParser
import DefaultsCLI
import Foundation
import GroupDefaults

/// The device options `create` and `settings` share: its platform and cfprefsd's cache.
struct DeviceSettingOptions: ParsableArguments {
    @Option(help: "The platform: \(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", ")) (created: iOS).")
    var platform: String?
    @Option(help: "on: the device's processes read through cfprefsd's cache (a plist edited directly is not seen); default on for macOS only.")
    var preferencesCache: String?

    var parsedPlatform: DevicePlatform? {
        get throws {
            do { return try platform.map(DevicePlatform.named) } catch { throw ValidationError("--platform: \(error)") }
        }
    }

    var parsedPreferencesCache: Bool? {
        get throws {
            switch preferencesCache {
            case nil: return nil
            case "on"?, "true"?: return true
            case "off"?, "false"?: return false
            case let other?: throw ValidationError("--preferences-cache: '\(other)' is not on or off")
            }
        }
    }

    var isEmpty: Bool { platform == nil && preferencesCache == nil }
}

extension DeviceSettings {
    /// How `device list` and `device settings` show them.
    var summary: String { "\(platform.rawValue), preferences cache \(preferencesCache ? "on" : "off")" }
}

extension DeviceCommand {
    struct Settings: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or change a device's platform and preferences cache (processes started afterwards use them).")
        @OptionGroup var location: LocationOptions
        @Argument var name: String
        @OptionGroup var settings: DeviceSettingOptions
        func run() throws {
            let manager = DeviceManager(root: try location.simulationRoot.root)
            let result =
                settings.isEmpty
                ? try manager.settings(of: name)
                : try manager.changeSettings(
                    of: name, platform: try settings.parsedPlatform, preferencesCache: try settings.parsedPreferencesCache)
            print("\(name)  \(result.summary)")
        }
    }
}
