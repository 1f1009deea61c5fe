import NotesShared
import SimulatedFoundation  // was: import Foundation

// The home-screen widget: it shows the app group's settings and renders
// again when they change.

registerDefaultSettings()
let timeline = WidgetTimeline(name: "widget", defaults: .shared)
timeline.start()
timeline.readCommands()
