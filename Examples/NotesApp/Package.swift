// swift-tools-version: 6.0
// A user's own app, as a package of its own: the app, its widget and its
// intent extension as three executables over one shared library, written as
// Apple's templates write them. Each file imports Apple's module where it
// exists and groupsim's in its place on Linux (`#if canImport(WidgetKit)`).
import PackageDescription

let package = Package(
    name: "NotesApp",
    platforms: [.macOS(.v13)],
    dependencies: [
        // groupsim, from this repository. `name:` makes `package: "groupsim"` below hold in
        // any checkout: a path dependency is otherwise known by its folder's name.
        .package(name: "groupsim", path: "../.."),
    ],
    targets: [
        // What every target of the app shares: the app group's suite, its keys, the display options.
        .target(name: "NotesShared", dependencies: [simulated("SimulatedFoundation")]),
        // The app: its @AppStorage settings, WidgetCenter reloads, the iCloud bridge, logging.
        .executableTarget(
            name: "notes-app",
            dependencies: ["NotesShared", simulated("SimulatedSwiftUI"), simulated("SimulatedWidgetKit"), simulated("SimulatedOSLog")],
            path: "Sources/NotesApp"),
        // The widget extension: a TimelineProvider, run by GroupSim.runWidget.
        .executableTarget(
            name: "notes-widget", dependencies: ["NotesShared", simulated("SimulatedWidgetKit"), simulated("SimulatedOSLog")],
            path: "Sources/NotesWidget"),
        // The intent extension: an AppIntent, run by GroupSim.runIntents.
        .executableTarget(
            name: "notes-intent",
            dependencies: ["NotesShared", simulated("SimulatedAppIntents"), simulated("SimulatedWidgetKit"), simulated("SimulatedOSLog")],
            path: "Sources/NotesIntent"),
        // The widget as it was before the app group: its provider reads UserDefaults.standard (the
        // mistake catches/ shows).
        .executableTarget(name: "legacy-widget", dependencies: ["NotesShared", simulated("SimulatedWidgetKit")], path: "Sources/LegacyWidget"),
        // The app's own tests: its executables in a simulation (GroupSimTesting). Depending on the
        // executables builds them beside the tests, where the library finds them; groupsim's own
        // executables run the cloud and scenario files.
        .testTarget(name: "NotesAppTests", dependencies: [
            "notes-app", "notes-widget", "notes-intent", "legacy-widget",
            .product(name: "GroupSimTesting", package: "groupsim"),
            .product(name: "groupsim", package: "groupsim"),
            .product(name: "main-app", package: "groupsim"),
            .product(name: "widget", package: "groupsim"),
            .product(name: "intent-extension", package: "groupsim"),
        ]),
    ]
)

/// One of groupsim's modules that stand in for Apple's on Linux.
func simulated(_ product: String) -> Target.Dependency { .product(name: product, package: "groupsim") }
