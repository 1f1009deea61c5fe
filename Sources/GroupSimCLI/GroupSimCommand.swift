import ArgumentParser
import Foundation
import GroupDefaults

/// `groupsim`: the simulator's command-line front door.
package struct GroupSimCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "groupsim",
        abstract: "Simulate how an iOS app, its widget and its extensions share settings.",
        version: GroupSimVersion.current,
        subcommands: [
            RunCommand.self, DefaultsCommand.self, ContainerCommand.self, DeviceCommand.self, AppManagementCommand.self, ExecCommand.self,
            CloudCommand.self, FuzzCommand.self, RootCommand.self, WardenCommand.self,
        ]
    )

    package init() {}

    /// macOS `defaults` spells the global domain `-g`; ArgumentParser would
    /// take that for an option, so it is renamed before parsing.
    package static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "defaults", let domain = domainPosition(in: arguments),
            arguments[domain] == "-g" || arguments[domain] == "-globalDomain"
        {
            arguments[domain] = DomainName.global
        }
        var command: ParsableCommand
        do { command = try parseAsRoot(arguments) } catch { exit(withError: error) }
        do {
            try command.run()
        } catch let error as ValidationError {
            // Found while running, the message says what to change: the general
            // usage of `groupsim` (all the parser knows here) would only bury it.
            FileHandle.standardError.write(Data("Error: \(error.message)\n".utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        } catch {
            exit(withError: error)
        }
    }
}

/// The index of the domain in `defaults VERB [OPTIONS] DOMAIN …`: the first
/// word after the verb that is neither an option nor an option's value.
func domainPosition(in arguments: [String]) -> Int? {
    let takesValue: Set<String> = ["--root", "--device", "--app"]
    var index = 2
    while index < arguments.count {
        let word = arguments[index]
        if takesValue.contains(word) {
            index += 2
            continue
        }
        if word.hasPrefix("--") {
            index += 1
            continue
        }
        return index
    }
    return nil
}
