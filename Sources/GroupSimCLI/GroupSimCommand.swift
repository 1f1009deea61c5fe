import ArgumentParser

/// `groupsim`: the simulator's command-line front door.
public struct GroupSimCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "groupsim",
        abstract: "Simulate how an iOS app, its widget and its extensions share settings.",
        subcommands: [RunCommand.self, DefaultsCommand.self, ContainerCommand.self, DeviceCommand.self, AppCommand.self, StressCommand.self]
    )

    public init() {}

    /// macOS `defaults` spells the global domain `-g`; ArgumentParser would
    /// take that for an option, so it is renamed before parsing.
    public static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "defaults" {
            arguments = arguments.map { $0 == "-g" || $0 == "-globalDomain" ? "NSGlobalDomain" : $0 }
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            exit(withError: error)
        }
    }
}

/// Where the simulated devices live; every command that touches files takes these.
struct LocationOptions: ParsableArguments {
    @Option(help: "Simulation root (default: $GROUPSIM_ROOT, else $XDG_DATA_HOME/groupsim, else ~/.local/share/groupsim).")
    var root: String?

    @Option(help: "Simulated device (default: $GROUPSIM_DEVICE, else iPhone).")
    var device: String?

    var simulationRoot: SimulationRootValue { SimulationRootValue(root: root, device: device) }
}
