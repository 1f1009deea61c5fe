import ArgumentParser
import DefaultsCLI
import GroupDefaults

/// `groupsim root …`: settings of the simulation root itself (`<root>/settings.plist`).
struct RootCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "root", abstract: "Show or change the simulation root's settings.",
        subcommands: [DurabilitySetting.self])

    struct DurabilitySetting: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "durability",
            abstract:
                "Show or set how far a commit goes: durable (on disk before it returns, survives a power loss; the default) or process (nothing flushed, survives any process's crash).",
            discussion:
                "Processes started afterwards use the new setting; running ones keep theirs. docs/architecture.md, \"Durability\", has the trade.")
        @OptionGroup var location: LocationOptions
        @Argument(help: ArgumentHelp("The new setting; omitted: print the current one.", valueName: "durable|process"))
        var durability: Durability?

        func run() throws {
            let root = try location.simulationRoot.root
            if let durability {
                try root.setDurability(durability)
            } else {
                print(try root.durability().rawValue)
            }
        }
    }
}

extension Durability: ExpressibleByArgument {}
