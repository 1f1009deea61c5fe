// The app docs/testing.md's tests launch as "NotesApp": a program that links SimulatedFoundation, so a test drives
// its UserDefaults through the control channel; it runs until its standard input ends.
import SimulatedFoundation

while readLine() != nil {}
