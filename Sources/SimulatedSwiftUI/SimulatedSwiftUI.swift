// SwiftUI's settings storage, without SwiftUI's views: `@AppStorage` and the
// `Binding` its `$` gives, over SimulatedFoundation's `UserDefaults`.
//
// Replace `import SwiftUI` with `import SimulatedSwiftUI` in a file whose
// settings code should run against the simulation: this module re-exports
// SimulatedFoundation (and so Foundation), so `UserDefaults` in that file is
// the simulated class. Linux has no SwiftUI, so there are no views here; code
// that declares views does not compile against this module (docs/api.md).
@_exported import SimulatedFoundation
