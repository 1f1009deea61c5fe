import SimulatedAppIntents

// The intent extension's entry point. In Xcode it is `@main struct
// NotesIntents: AppIntentsExtension {}`; here groupsim performs the intent
// named on the command line (`notes-intent AddNoteIntent text="Buy milk"`)
// as the system does, and exits.
GroupSim.runIntents(AddNoteIntent.self)
