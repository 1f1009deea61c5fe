import AppInstall
import AppModel
import ArgumentParser
import DefaultsCLI
import GroupDefaults

/// `groupsim device reboot DEVICE`: the device restarts and stays locked
/// until `groupsim device unlock DEVICE`, its first unlock: processes
/// launched meanwhile read their preferences as absent (docs/apple-traps.md).
struct RebootCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reboot",
        abstract: "Reboot a device: until it is unlocked, processes launched on it cannot read their preferences (data protection).")
    @OptionGroup var location: LocationOptions
    @Argument(help: "The device.") var name: String
    @Option(
        help: ArgumentHelp(
            "The containers' file protection: until-first-unlock (iOS's default) or none (readable at once).", valueName: "protection"))
    var protection: String = ProtectedData.Protection.untilFirstUnlock.rawValue

    func run() throws {
        guard let chosen = ProtectedData.Protection(rawValue: protection) else {
            throw ValidationError(
                "--protection '\(protection)' is not one of \(ProtectedData.Protection.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        try DeviceManager(root: location.simulationRoot.root).reboot(name, protection: chosen)
    }
}

/// `groupsim device unlock DEVICE`: the person's first unlock after a reboot.
struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock a rebooted device: processes opening their preferences from now on read them (running ones keep what they read).")
    @OptionGroup var location: LocationOptions
    @Argument(help: "The device.") var name: String
    func run() throws { try DeviceManager(root: location.simulationRoot.root).unlock(name) }
}
