// Foundation, with the simulated `UserDefaults` in place of Foundation's.
//
// Replace `import Foundation` with `import SimulatedFoundation`: everything
// Foundation has is still there (this module re-exports it), and the name
// `UserDefaults` now means this module's class, because Swift prefers a
// module's own declaration to one it re-exports. A file that imports both
// modules by name sees two `UserDefaults` and gets an "ambiguous" error
// rather than Foundation's by accident; README.md shows how to switch a whole
// module at once.
//
// Which process this is (root, device, bundle id, app groups) comes from the
// GROUPSIM_* environment variables that `groupsim exec` sets; launch
// arguments come from the process's own arguments.
@_exported import Foundation
