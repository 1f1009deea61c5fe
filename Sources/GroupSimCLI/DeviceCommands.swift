import AppInstall
import AppModel
import AppProtocol
import ArgumentParser
import DefaultsCLI
import Foundation
import GroupDefaults

/// `groupsim device …`: simulated devices, as `simctl` manages simulators.
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Create, list, erase and delete simulated devices; manage their apps (MDM).",
        subcommands: [
            Create.self, List.self, Erase.self, Delete.self, ManagedCommand.self, RebootCommand.self, UnlockCommand.self, ClockCommand.self,
            Settings.self,
        ])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a device.")
        @OptionGroup var location: LocationOptions
        @Argument var name: String
        @OptionGroup var settings: DeviceSettingOptions
        func run() throws {
            let chosen = DeviceSettings(platform: try settings.parsedPlatform ?? .default, preferencesCache: try settings.parsedPreferencesCache)
            try DeviceManager(root: location.simulationRoot.root).create(name, settings: chosen)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List devices with their app and group containers.")
        @OptionGroup var location: LocationOptions
        func run() throws {
            let root = try location.simulationRoot.root
            let manager = DeviceManager(root: root)
            let devices = try manager.list()
            if devices.isEmpty { print("no devices in \(root.path)") }
            for device in devices {
                if let problem = device.problem {
                    print("\(device.name)  (\(problem); groupsim device delete \(device.name) removes it)")
                    continue
                }
                let created = device.created.map { ", created \($0.formatted(.iso8601))" } ?? ""
                if let settingsProblem = device.settingsProblem {
                    print("\(device.name)  (settings unreadable, so no app launches on it: \(settingsProblem); fix or remove the file\(created))")
                } else {
                    print("\(device.name)  (\(device.settings?.summary ?? "unreadable settings")\(created))")
                }
                if let state = try? manager.protectedDataState(device.name), state.locked { print("  state  \(state.summary)") }
                for app in device.apps { print("  app    \(app)") }
                for group in device.groups { print("  group  \(group)") }
            }
        }
    }

    struct Erase: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Erase a device's content and settings (its containers and preferences).")
        @OptionGroup var location: LocationOptions
        @Argument var name: String
        func run() throws { try DeviceManager(root: location.simulationRoot.root).erase(name) }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a device.")
        @OptionGroup var location: LocationOptions
        @Argument var name: String
        func run() throws { try DeviceManager(root: location.simulationRoot.root).delete(name) }
    }
}

/// `groupsim app …`: installing simulated apps on devices.
struct AppManagementCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Install simulated apps (manifests) on devices.",
        subcommands: [Install.self, List.self, Uninstall.self, Example.self])

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Install an app: create its targets' and groups' containers.")
        @OptionGroup var location: LocationOptions
        @Option(help: "The manifest (YAML); the built-in example if omitted.") var manifest: String?
        func run() throws {
            let (text, parsed) = try manifest.map { try DeviceManager.loadManifest($0) } ?? (AppManifest.exampleYAML, .example)
            let place = try location.simulationRoot
            try DeviceManager(root: place.root).install(parsed, manifestText: text, device: place.device)
            print("installed \(parsed.name) on \(place.device)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps installed on a device.")
        @OptionGroup var location: LocationOptions
        func run() throws {
            let place = try location.simulationRoot
            for (bundle, manifest) in try DeviceManager(root: place.root).installed(device: place.device) {
                print("\(bundle)  \(manifest.name)")
                for (role, target) in manifest.targets.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                    print(
                        "  \(role.rawValue.padding(toLength: 17, withPad: " ", startingAt: 0)) \(target.bundleIdentifier)  groups: \(target.appGroups.joined(separator: ", "))"
                    )
                }
            }
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an installed app's containers.")
        @OptionGroup var location: LocationOptions
        @Argument var bundle: String
        func run() throws {
            let place = try location.simulationRoot
            try DeviceManager(root: place.root).uninstall(bundle: bundle, device: place.device)
        }
    }

    struct Example: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the built-in example app's manifest (a starting point for your own; docs/manifest.md has every key).")
        func run() { print(AppManifest.exampleYAML) }
    }
}
