/// What an app's own executable is told of its widget, in its environment
/// (`ExecutableIdentity` sets them from the manifest; SimulatedWidgetKit's
/// `WidgetCenter` reads them): whom its reloads are for, their budget, and
/// whether it was launched in the background (its reloads then count).
package enum WidgetEnvironment {
    /// The app's widget target's bundle id (unset: the app has no widget target).
    package static let bundleVariable = SimulationEnvironment.Name.widgetBundle
    /// Its daily reload budget: a number, or `unlimited`.
    package static let budgetVariable = SimulationEnvironment.Name.widgetReloadBudget
    /// `background` when the system launched the process; unset or `foreground`: the person opened it.
    package static let launchVariable = SimulationEnvironment.Name.launch
    /// The simulator's bound on a timeline provider's answer, in seconds (`GroupSim.runWidget`).
    package static let providerTimeoutVariable = SimulationEnvironment.Name.widgetProviderTimeout

    package static let unlimited = "unlimited"

    /// Reloads a widget gets a day when its manifest says nothing: the common
    /// observation for a frequently viewed widget (Apple: 40 to 70).
    package static let defaultDailyBudget = 40

    /// The budget as the variable writes it.
    package static func budgetText(_ budget: Int?) -> String { budget.map(String.init) ?? unlimited }

    /// The budget the variable says (nil: unlimited), or an error naming the variable and what it holds.
    package static func budget(_ text: String) throws -> Int? {
        if text == unlimited { return nil }
        guard let number = Int(text), number >= 0 else {
            throw DeviceError(
                "\(budgetVariable)=\(text) is neither a number of reloads (0 or more) nor '\(unlimited)'; it is set from the manifest's reload-budget"
            )
        }
        return number
    }
}
