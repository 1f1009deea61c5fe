import NotesShared
import SimulatedFoundation  // was: import Foundation

// Version 1 of the widget, from before the app had an app group, still
// shipped for older home screens. It reads UserDefaults.standard, which in an
// extension is the extension's own private domain: it never sees what the
// app writes, and shows the registered values forever.

registerDefaultSettings()
let timeline = WidgetTimeline(name: "legacy-widget", defaults: .standard)
timeline.start()
timeline.readCommands()
