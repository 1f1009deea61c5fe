import ArgumentParser
import GroupDefaults

/// Where the simulated devices live; every command that touches files takes these.
package struct LocationOptions: ParsableArguments {
    @Option(help: "Simulation root (default: $GROUPSIM_ROOT, else $XDG_DATA_HOME/groupsim, else ~/.local/share/groupsim).")
    package var root: String?

    @Option(help: "Simulated device (default: $GROUPSIM_DEVICE, else iPhone).")
    package var device: String?

    package init() {}

    package var simulationRoot: SimulationRootValue { get throws { try SimulationRootValue(root: root, device: device) } }
}

/// Options of every `defaults` subcommand.
package struct DomainOptions: ParsableArguments {
    @OptionGroup package var location: LocationOptions

    package init() {}

    @Option(help: "Resolve the domain inside this app's container (its non-group suites, or its private copy of a group it is not entitled to).")
    package var app: String?

    package var files: DomainFiles {
        get throws {
            let place = try location.simulationRoot
            try place.requireKnownDevice()
            if let app {
                guard !DomainName.isGroup(app) else {
                    throw ValidationError("--app takes an app's bundle id, found the app group \(app); name the group as the domain instead")
                }
                _ = try place.requireKnownContainer(app)
            }
            return place.files(app: app)
        }
    }
}
