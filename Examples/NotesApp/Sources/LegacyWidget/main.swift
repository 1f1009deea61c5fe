import NotesShared
import SimulatedWidgetKit

// The legacy widget's entry point: the kind it always had, so the app's
// reloads reach it.
GroupSim.runWidget(kind: notesWidgetKind, provider: LegacyProvider())
