// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "groupsim",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "groupsim", targets: ["groupsim"]),
        .executable(name: "main-app", targets: ["main-app"]),
        .executable(name: "widget", targets: ["widget"]),
        .executable(name: "intent-extension", targets: ["intent-extension"]),
        .library(name: "GroupDefaults", targets: ["GroupDefaults"]),
        // Foundation with the simulated UserDefaults: `import SimulatedFoundation` in place of `import Foundation`.
        .library(name: "SimulatedFoundation", targets: ["SimulatedFoundation"]),
        // SwiftUI's `@AppStorage` without views, over SimulatedFoundation: `import SimulatedSwiftUI` in place of `import SwiftUI`.
        .library(name: "SimulatedSwiftUI", targets: ["SimulatedSwiftUI"]),
        // Apple's unified logging (`Logger`, `os_log`) to standard error: `import SimulatedOSLog` where `import os` cannot build.
        .library(name: "SimulatedOSLog", targets: ["SimulatedOSLog"]),
        // App Intents over SimulatedFoundation, run as the system runs them: `import SimulatedAppIntents` in place of `import AppIntents`.
        .library(name: "SimulatedAppIntents", targets: ["SimulatedAppIntents"]),
        // WidgetKit's timeline providers and WidgetCenter over SimulatedFoundation: `import SimulatedWidgetKit` in place of
        // `import WidgetKit`; `GroupSim.runWidget` runs a provider as the widget's process.
        .library(name: "SimulatedWidgetKit", targets: ["SimulatedWidgetKit"]),
        // For your own test suites (XCTest, Swift Testing): simulations that run your executables as an app's targets.
        .library(name: "GroupSimTesting", targets: ["GroupSimTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // The cloud's server and the devices' sync agents (HTTP, WebSocket); only NIO itself, no TLS.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // Property-based tests of the plist codecs (test-only; one small module, no dependencies).
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
    ],
    targets: [
        // libinotifytools from Debian; confined to one thread by ChangeWatcher.
        .systemLibrary(
            name: "CInotifyTools",
            providers: [.apt(["libinotifytools0-dev"])]
        ),
        // Linux system calls without a glibc wrapper (openat2), as header-only C.
        .systemLibrary(name: "CLinuxCalls"),
        // State shared by threads: `Locked` and `LockedCondition` over a pthread mutex, which Thread Sanitizer sees. No dependencies.
        .target(name: "Guarded"),
        // Property-list values and their codecs (binary, XML, old-style text). Pure logic.
        .target(name: "PropertyList"),
        // The simulation's plain values, below everything that touches the disk: domain names, device settings and
        // platforms, data protection, managed changes, durability, durations, the GROUPSIM_* variables (named once,
        // read once). No I/O: it starts no process, opens no file or socket.
        .target(name: "SimulationValues", dependencies: ["PropertyList"]),
        // One plist file shared between processes: lock file, merge, atomic replace.
        .target(name: "SharedFiles", dependencies: ["CLinuxCalls", "Guarded", "PropertyList", "SimulationValues"]),
        // UserDefaults semantics over the simulation root's shared files; re-exports SimulationValues.
        .target(name: "GroupDefaults", dependencies: ["PropertyList", "SharedFiles", "SimulationValues", "CInotifyTools", "Guarded"]),
        // Foundation's UserDefaults API over GroupDefaults; re-exports Foundation.
        .target(name: "SimulatedFoundation", dependencies: [
            "AppProtocol", "ChildProcess", "CloudDevice", "CloudModel", "ExecutableFile", "GroupDefaults", "Guarded", "PropertyList",
            "SharedFiles", "SimulationValues",
        ]),
        // `@AppStorage` and its `Binding` over SimulatedFoundation's UserDefaults; re-exports SimulatedFoundation. No views.
        .target(name: "SimulatedSwiftUI", dependencies: ["Guarded", "SimulatedFoundation"]),
        // `Logger` and `os_log` as `import os` has them, each message a line on standard error. Its one dependency is Guarded (its lock).
        .target(name: "SimulatedOSLog", dependencies: ["Guarded"]),
        // `AppIntent`, `@Parameter`, `IntentResult` … and GroupSim's runners of them (an intent extension's main, a
        // running program's perform-intent); re-exports SimulatedFoundation.
        .target(name: "SimulatedAppIntents", dependencies: ["AppProtocol", "GroupDefaults", "Guarded", "PropertyList", "SimulatedFoundation", "SimulationValues"]),
        // What a device keeps beside the apps' preferences: its simulated clock, WidgetCenter's requests and reload budget,
        // the widgets running on it. Below both the app model and the Foundation face (no YAML).
        .target(name: "DeviceState", dependencies: ["GroupDefaults", "PropertyList", "SharedFiles", "SimulationValues"]),
        // WidgetKit's timeline API (static and App Intents configured), WidgetCenter, and the widget host (`GroupSim.runWidget`,
        // which also runs a widget's interactive intents); re-exports SimulatedSwiftUI.
        .target(name: "SimulatedWidgetKit", dependencies: [
            "AppProtocol", "DeviceState", "GroupDefaults", "Guarded", "PropertyList", "SharedFiles", "SimulatedAppIntents", "SimulatedFoundation",
            "SimulatedSwiftUI", "SimulationValues",
        ]),
        // The iCloud key-value store's shared rules: limits, change order, wire messages. Pure.
        .target(name: "CloudModel", dependencies: ["PropertyList"]),
        // A device's side of the iCloud key-value store: its copies of the stores and
        // settings, and the store an app process uses (NSUbiquitousKeyValueStore).
        .target(name: "CloudDevice", dependencies: ["ChildProcess", "CloudModel", "GroupDefaults", "Guarded", "PropertyList", "SharedFiles", "SimulationValues"]),
        // The cloud's HTTP face as a client asks it (one JSON request over a plain TCP socket), where
        // the cloud listens, its control secret, and network changes (CloudControl): what the runner
        // and GroupSimTesting need of the cloud, without NIO.
        .target(name: "CloudClient", dependencies: ["CloudDevice", "CloudModel", "GroupDefaults", "Guarded", "PropertyList", "SharedFiles"]),
        // The simulated cloud (server) and each device's sync agent, over real sockets.
        .target(name: "CloudService", dependencies: [
            "CloudClient", "CloudDevice", "CloudModel", "DeviceState", "GroupDefaults", "Guarded", "PropertyList", "SharedFiles",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOWebSocket", package: "swift-nio"),
        ]),
        // Strict YAML reading with file:line:column errors (manifests, scenarios); it reads no file itself (its callers
        // hand it the bytes). It also imports CYaml, libyaml under Yams, for its event stream (the bound on alias
        // expansion); Yams does not offer CYaml as a product, so the Yams product is what brings it.
        .target(name: "SpecFormat", dependencies: ["PropertyList", .product(name: "Yams", package: "Yams")]),
        // Terminal styling and line output shared by the command-line faces.
        .target(name: "Terminal", dependencies: ["Guarded"]),
        // The control protocol between a driver and a simulated process: requests, responses,
        // events, roles, and their one encoder and one decoder. Pure.
        .target(name: "AppProtocol", dependencies: ["PropertyList", "SimulationValues"]),
        // What a simulated app is: its manifest, parsed from YAML it is given, and its targets. Pure.
        .target(name: "AppModel", dependencies: ["AppProtocol", "PropertyList", "SimulationValues", "SpecFormat"]),
        // Where apps are installed (DeviceManager: devices, installs, reboots) and what an installed app's executable
        // is told (ExecutableIdentity): reads and writes the root.
        .target(name: "AppInstall", dependencies: [
            "AppModel", "AppProtocol", "CloudDevice", "DeviceState", "GroupDefaults", "PropertyList", "SharedFiles", "SimulationValues",
            "SpecFormat",
        ]),
        // The simulated app processes: session, widget timeline, intents, the two faces (prompt, JSON protocol).
        .target(name: "SimulatedApp", dependencies: [
            "AppInstall", "AppModel", "AppProtocol", "CloudDevice", "CloudModel", "DeviceState", "GroupDefaults", "Guarded", "PropertyList", "SharedFiles",
            "SimulationValues", "Terminal",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "main-app", dependencies: ["ChildProcess", "SimulatedApp"]),
        .executableTarget(name: "widget", dependencies: ["ChildProcess", "SimulatedApp"]),
        .executableTarget(name: "intent-extension", dependencies: ["ChildProcess", "SimulatedApp"]),
        // A scenario file as typed steps and checks: its grammar, parsing and validation with
        // file:line:column errors. No processes, no I/O: the file itself, its executables and manifests it asks
        // of a ScenarioFileSystem; fuzzed on its own.
        .target(name: "ScenarioModel", dependencies: [
            "AppModel", "AppProtocol", "CloudModel", "PropertyList", "SimulationValues", "SpecFormat",
            .product(name: "Yams", package: "Yams"),
        ]),
        // The runner that executes scenarios with real processes, and the reports.
        // It drives the roles only through processes and the protocol: it knows the protocol and the
        // app model, never the simulated processes' code.
        .target(name: "Scenarios", dependencies: [
            "AppInstall", "AppModel", "AppProtocol", "CloudClient", "CloudDevice", "CloudModel", "ChildProcess", "DeviceState",
            "ExecutableFile", "GroupDefaults", "Guarded", "PropertyList", "ScenarioModel", "SharedFiles", "SimulationValues", "SpecFormat", "Terminal",
        ]),
        // What the `groupsim defaults` commands share with `groupsim-stress`: the location and domain
        // options, and the watch loop (the test tool's watcher probes must watch as `defaults watch` does).
        .target(name: "DefaultsCLI", dependencies: [
            "AppInstall", "AppModel", "AppProtocol", "DeviceState", "GroupDefaults", "Guarded", "PropertyList", "Terminal",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The `groupsim` command tree; the executable only calls into it.
        .target(name: "GroupSimCLI", dependencies: [
            "AppInstall", "AppModel", "ChildProcess", "CloudClient", "CloudDevice", "CloudModel", "CloudService", "AppProtocol", "DefaultsCLI", "DeviceState",
            "GroupDefaults", "Guarded", "PropertyList", "SharedFiles", "ScenarioModel", "Scenarios", "Terminal",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "groupsim", dependencies: ["ChildProcess", "GroupSimCLI"]),
        // Load generators and watcher probes that the tests start as real processes; not a product.
        .target(name: "StressTool", dependencies: [
            "DefaultsCLI", "GroupDefaults", "PropertyList", "SharedFiles", "Terminal",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "groupsim-stress", dependencies: ["ChildProcess", "StressTool"]),
        // A child process driven line by line: tests, benchmarks and the scenario runner.
        .target(name: "ChildProcess", dependencies: ["Guarded", "SimulationValues"]),
        // The symbols an executable's ELF file imports or defines. Reads the one file; no dependencies.
        .target(name: "ExecutableFile"),
        // Benchmarks with their own executable; results are kept in benchmarks/.
        .target(name: "Benchmarks", dependencies: [
            "AppProtocol", "ChildProcess", "CloudDevice", "CloudModel", "GroupDefaults", "Guarded", "PropertyList", "SharedFiles", "SimulatedFoundation",
            "SimulationValues", "Terminal",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Histogram", package: "hdrhistogram-swift"),
        ]),
        .executableTarget(name: "groupsim-bench", dependencies: ["ChildProcess", "Benchmarks"]),
        // Users' own tests drive their executables (which link SimulatedFoundation) in a simulation: devices, apps, the cloud,
        // faults, scenario files; failures at the test's line (Swift Testing and XCTest adapters).
        .target(name: "GroupSimTesting", dependencies: [
            "AppInstall", "AppModel", "AppProtocol", "ChildProcess", "CloudDevice", "CloudModel", "DeviceState", "GroupDefaults", "Guarded", "PropertyList",
            "ScenarioModel", "Scenarios", "SimulationValues", "SpecFormat", "Terminal",
        ]),

        // Settings code written as apps write it (only `import SimulatedFoundation` in place of `import Foundation`,
        // `import SimulatedSwiftUI` in place of `import SwiftUI`, `import SimulatedWidgetKit` in place of `import WidgetKit`), in Swift 5 mode as such code usually is; run as real
        // processes of a simulated app by ExamplesTests.
        .target(
            name: "SettingsExamples", dependencies: ["SimulatedAppIntents", "SimulatedFoundation", "SimulatedSwiftUI", "SimulatedWidgetKit"], path: "Examples/SettingsExamples",
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "settings-examples", dependencies: ["SettingsExamples", "SimulatedFoundation"], path: "Examples/settings-examples"),

        .target(name: "TestSupport", dependencies: ["AppProtocol", "ChildProcess", "GroupDefaults", "PropertyList"], path: "Tests/TestSupport"),
        // Locked and LockedCondition on their own: no executable, no file.
        .testTarget(name: "GuardedTests", dependencies: ["Guarded"]),
        .testTarget(name: "PropertyListTests", dependencies: [
            "PropertyList", .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        // Counts a thread's heap allocations (malloc defined in the test executable over glibc's).
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        .testTarget(name: "GroupDefaultsTests", dependencies: ["GroupDefaults", "PropertyList", "SharedFiles", "TestSupport", "AllocationCounter"]),
        .testTarget(name: "SimulatedFoundationTests", dependencies: [
            "AppProtocol", "CloudDevice", "CloudModel", "SimulatedFoundation", "SimulatedOSLog", "GroupDefaults", "PropertyList", "TestSupport",
            "groupsim",
            "AllocationCounter",
        ]),
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["AppProtocol", "SettingsExamples", "SimulatedFoundation", "SimulatedSwiftUI", "GroupDefaults", "PropertyList", "TestSupport", "groupsim", "settings-examples"],
            // Sources that the tests compile with swiftc to show how `UserDefaults` resolves.
            exclude: ["ImportFixtures"]),
        // The iCloud key-value store's rules, codec, device copy and ledger (pure or on files; no server).
        .testTarget(name: "CloudTests", dependencies: [
            "CloudModel", "CloudDevice", "CloudService", "GroupDefaults", "PropertyList", "TestSupport",
            .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        // The cloud's HTTP client against tiny servers of the test's own on loopback: hostile replies, stalls, early closes.
        .testTarget(name: "CloudClientTests", dependencies: ["CloudClient", "CloudModel", "PropertyList"]),
        // GroupSimTesting as a user's test suite uses it, with settings-examples as the user's executable.
        .testTarget(name: "GroupSimTestingTests", dependencies: [
            "GroupSimTesting", "settings-examples", "groupsim", "main-app", "widget", "intent-extension",
        ], exclude: ["Scenarios"]),
        // The scenario model's own tests: the grammar, parsing, writing back, the docs' tables; no executable and no
        // process, so scripts/fast-test.sh builds and runs them alone in seconds.
        .testTarget(name: "ScenarioModelTests", dependencies: [
            "AppModel", "PropertyList", "ScenarioModel", "SimulationValues", "SpecFormat",
        ]),
        // The runner's logic (steps, waits, checks, judgements, the log) through its seam: scripted processes and a test
        // clock, no executable and no process.
        .testTarget(name: "RunnerLogicTests", dependencies: [
            "AppProtocol", "ChildProcess", "Guarded", "PropertyList", "ScenarioModel", "Scenarios",
        ]),
        .testTarget(name: "IntegrationTests", dependencies: [
            "AppModel", "AppProtocol", "ChildProcess", "CloudClient", "CloudDevice", "CloudModel", "CloudService", "DeviceState", "GroupDefaults",
            "PropertyList", "ScenarioModel", "Scenarios", "SharedFiles",
            "SpecFormat", "TestSupport", "groupsim", "groupsim-stress", "groupsim-bench", "main-app", "widget", "intent-extension",
        ]),
    ]
)

// Coverage-guided fuzz targets (libFuzzer), declared only when GROUPSIM_FUZZ=1:
// scripts/fuzz.sh builds them with -sanitize=fuzzer in .build-fuzz. The
// executable has no main of its own (libFuzzer's drives it), so an ordinary
// build must not see it.
if Context.environment["GROUPSIM_FUZZ"] == "1" {
    package.targets.append(.executableTarget(
        name: "groupsim-fuzz",
        dependencies: ["AppModel", "AppProtocol", "CloudDevice", "CloudModel", "GroupDefaults", "PropertyList", "ScenarioModel", "SimulationValues", "SpecFormat"],
        path: "Fuzz/Sources",
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    ))
    package.products.append(.executable(name: "groupsim-fuzz", targets: ["groupsim-fuzz"]))
}
