// App Intents without the system that runs them: `AppIntent`, `@Parameter`,
// `IntentResult` and their companions, over SimulatedFoundation.
//
// Replace `import AppIntents` with `import SimulatedAppIntents` in a file
// whose intents should run in the simulation: this module re-exports
// SimulatedFoundation (and so Foundation), so `UserDefaults` in that file is
// the simulated class. What the system does on Apple platforms (find the
// intent, fill its parameters, call `perform()`, bound its time) is done by
// `GroupSim.runIntents(_:)` in an intent extension's main and by
// `GroupSim.offerIntents(_:)` in a running program (docs/api.md).
@_exported import SimulatedFoundation
