import AppModel
import ArgumentParser
import DefaultsCLI
import Foundation
import GroupDefaults

/// `groupsim container ID`: a container's path, like `simctl get_app_container`.
struct ContainerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "container",
        abstract: "Print the path of an app's or an app group's container (one that exists, or that an installed app uses).",
        discussion: "An id starting with 'group.' names an app-group container; any other names an app's data container."
    )

    @OptionGroup var location: LocationOptions

    @Argument(help: "A bundle identifier or an app-group identifier.")
    var identifier: String

    func run() throws {
        let place = try location.simulationRoot
        try place.requireKnownDevice()
        let isGroup = DomainName.isGroup(identifier)
        let path = isGroup
            ? try place.root.groupContainerPath(device: place.device, groupIdentifier: identifier)
            : try place.root.appContainerPath(device: place.device, bundleIdentifier: identifier)
        // A container exists once its app is installed (or a process used it): a typo must not make one.
        if !FileManager.default.fileExists(atPath: path) {
            let installed = try DeviceManager(root: place.root).installed(device: place.device).flatMap { $0.manifest.targets.values }
            let known = isGroup ? Set(installed.flatMap(\.appGroups)) : Set(installed.map(\.bundleIdentifier))
            guard known.contains(identifier) else {
                var message = "no \(isGroup ? "app group" : "app") \(identifier) on \(place.device): nothing installed there uses it"
                if let guess = DeviceManager.closest(to: identifier, among: known.sorted()) { message += "; did you mean \(guess)?" }
                throw DeviceError(message + " (install its app: groupsim app install --device \(place.device) [--manifest FILE])")
            }
        }
        try place.root.prepareConfinedDirectory(path)
        print(path)
    }
}
