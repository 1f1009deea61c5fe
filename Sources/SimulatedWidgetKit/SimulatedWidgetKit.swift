// WidgetKit's timeline API without its views: a widget's `TimelineProvider`,
// its entries and reload policies, and `WidgetCenter`, over
// SimulatedFoundation's `UserDefaults` and the device's simulated clock.
//
// Replace `import WidgetKit` with `import SimulatedWidgetKit` in the file
// that declares the provider and its entry: this module re-exports
// SimulatedSwiftUI (and so SimulatedFoundation and Foundation), as a widget
// file also imports SwiftUI. Linux has no SwiftUI, so there are no views and
// no `Widget` or `WidgetConfiguration`: the widget target's main calls
// `GroupSim.runWidget(kind:provider:)` instead of `@main struct …: Widget`
// (docs/api.md, "SimulatedWidgetKit").
@_exported import SimulatedFoundation
@_exported import SimulatedSwiftUI
