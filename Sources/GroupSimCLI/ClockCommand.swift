import AppModel
import ArgumentParser
import DefaultsCLI
import DeviceState
import Foundation
import GroupDefaults

/// `groupsim device clock DEVICE [--advance 6h]`: the device's simulated
/// clock and its widgets' reload budgets; advancing it past a day's end
/// refills the budgets and delivers the reloads they deferred.
struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock", abstract: "Show or advance a device's simulated clock, with its widgets' daily reload budgets.",
        discussion: """
            Prints the device's time, how far it is ahead of the real time, and for each widget the app \
            asked to reload: the simulated day, reloads counted against the budget, deferred, and free \
            (asked from the foreground). --advance moves the clock forward first (30s, 90m, 6h, 1d). \
            The device's iCloud upload interval counts on this clock too: an upload it holds goes once \
            the interval has passed on it.
            """)
    @Option(help: "Simulation root (default: $GROUPSIM_ROOT, else $XDG_DATA_HOME/groupsim, else ~/.local/share/groupsim).")
    var root: String?
    @Argument(help: "The device.") var device: String
    @Option(help: "Move the clock forward by this much first (30s, 90m, 6h, 1d; at most 366d).") var advance: String?

    func run() throws {
        let place = try SimulationRootValue(root: root, device: device)
        try place.requireKnownDevice()
        let clock = DeviceClock(root: place.root, device: place.device)
        let budget = WidgetReloadBudget(root: place.root, device: place.device)
        if let advance {
            guard let seconds = SimulatedDuration.parse(advance), seconds > 0, seconds <= DeviceClock.longestAdvance else {
                throw ValidationError(SimulatedDuration.error(advance, what: "--advance"))
            }
            for widget in try budget.advanceClock(by: seconds) { print("delivered the deferred reload of \(widget)") }
        }
        let now = try clock.now()
        print("clock  \(now.formatted(.iso8601))  (day \(DeviceClock.day(of: now)), \(Self.describe(try clock.offset())) ahead of real time)")
        for (bundle, counters) in try budget.counters() {
            print(
                "widget \(bundle)  day \(counters.day): used \(counters.used), deferred \(counters.deferred), free \(counters.free)")
        }
    }

    static func describe(_ seconds: Double) -> String {
        seconds == 0 ? "0 s" : String(format: "%.0f s (%.2f days)", seconds, seconds / 86_400)
    }
}
