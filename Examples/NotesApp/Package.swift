// swift-tools-version: 6.0
// A user's own app, as a package of its own: the app, its widget and its
// intent extension as three executables over one shared library, written as
// ordinary settings code. The only change from Apple code is
// `import SimulatedFoundation` in place of `import Foundation`.
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
        // What every target of the app shares: the app group, its settings, the iCloud sync.
        .target(name: "NotesShared", dependencies: [.product(name: "SimulatedFoundation", package: "groupsim")]),
        .executableTarget(name: "notes-app", dependencies: ["NotesShared"], path: "Sources/NotesApp"),
        .executableTarget(name: "notes-widget", dependencies: ["NotesShared"], path: "Sources/NotesWidget"),
        .executableTarget(name: "notes-intent", dependencies: ["NotesShared"], path: "Sources/NotesIntent"),
        // The widget as it was before the app group: it reads UserDefaults.standard (the mistake
        // scenarios/catches/ shows).
        .executableTarget(name: "legacy-widget", dependencies: ["NotesShared"], path: "Sources/LegacyWidget"),
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
