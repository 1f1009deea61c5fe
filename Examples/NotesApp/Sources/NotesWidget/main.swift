import NotesShared
import SimulatedWidgetKit

// The widget extension's entry point. In Xcode it is `@main struct
// NotesWidget: Widget` with `StaticConfiguration(kind: notesWidgetKind,
// provider: Provider())`; here groupsim runs the provider as WidgetKit does.
GroupSim.runWidget(kind: notesWidgetKind, provider: Provider())
