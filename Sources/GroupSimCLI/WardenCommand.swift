import ArgumentParser
import ChildProcess

/// `groupsim warden`: not for people. A scenario run starts one (`Warden`)
/// and tells it what it starts and makes; it ends and removes what is left
/// of that once the run has ended, however the run ended.
struct WardenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "warden",
        abstract: "Internal: started by groupsim run, it ends what a run that was killed left running and removes its scenario roots.",
        shouldDisplay: false)

    func run() throws { Warden.serve() }
}
