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
        // A container exists once its app is installed (or a process used it): a typo must not make one.
        let path = try place.requireKnownContainer(identifier)
        try place.root.prepareConfinedDirectory(path)
        print(path)
    }
}
