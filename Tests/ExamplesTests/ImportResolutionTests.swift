import Foundation
import SimulatedFoundation
import TestSupport
import Testing

/// What `UserDefaults` means in a user's file, checked by the compiler: the
/// sources in ImportFixtures/ are type-checked with swiftc against the built
/// SimulatedFoundation module.
@Suite struct ImportResolutionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ImportFixtures").path
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The compiler's options for a module that imports SimulatedFoundation.
    static var searchPaths: [String] {
        [
            "-I", BuiltExecutable.directory + "/Modules",
            // The module maps of GroupDefaults' libinotifytools and SharedFiles' Linux calls, as SwiftPM passes them.
            "-I", packageRoot + "/Sources/CInotifyTools",
            "-I", packageRoot + "/Sources/CLinuxCalls",
        ]
    }

    /// Type-checks the fixtures as one module; the compiler's status and messages.
    static func typeCheck(_ files: [String], options: [String] = []) throws -> ProcessResult {
        try runProcess(
            "/usr/bin/env", ["swiftc", "-typecheck", "-module-name", "UserModule"] + searchPaths + options + files.map { fixtures + "/" + $0 })
    }

    /// SimulatedFoundation and the targets it depends on, as built objects, to link an executable with: each
    /// target's output file map names the objects of its sources now (a renamed source's old object stays in the
    /// folder, and would be linked too).
    static var simulatedFoundationObjects: [String] {
        get throws {
            try [
                "SimulatedFoundation", "AppProtocol", "GroupDefaults", "CloudDevice", "CloudModel", "PropertyList", "SharedFiles", "ChildProcess",
                "ExecutableFile", "Guarded", "SimulationValues",
            ]
            .flatMap { target in
                let map = URL(fileURLWithPath: BuiltExecutable.directory + "/\(target).build/output-file-map.json")
                let entries = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: map)) as? [String: [String: Any]])
                return entries.values.compactMap { $0["object"] as? String }.sorted()
            }
        }
    }

    /// Links fixtures (the first is the executable's top-level code) with SimulatedFoundation into `output`.
    static func link(_ files: [String], extra: [String] = [], output: String) throws {
        let result = try runProcess(
            "/usr/bin/env",
            ["swiftc", "-module-name", "UserApp", "-o", output] + searchPaths + extra
                + files.map { fixtures + "/" + $0 } + simulatedFoundationObjects + ["-linotifytools"])
        try #require(result.status == 0, "\(result.stderr)")
    }

    @Test func theImportReplacedMeansTheSimulatedUserDefaults() throws {
        let result = try Self.typeCheck(["OnlySimulated.swift"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Two `UserDefaults` are visible when Foundation is imported too (or
    /// re-exported, as XCTest does): the compiler refuses, it never silently
    /// picks Foundation's.
    @Test func bothImportsInOneFileAreAnAmbiguityNotFoundations() throws {
        for file in ["BothImports.swift", "XCTestAndSimulated.swift"] {
            let result = try Self.typeCheck([file])
            #expect(result.status != 0, "\(file)")
            #expect(result.stderr.contains("'UserDefaults' is ambiguous"), "\(file): \(result.stderr)")
        }
    }

    /// One declaration in the module switches every file of it, whatever each imports.
    @Test func aModuleWideAliasSwitchesEveryFile() throws {
        let result = try Self.typeCheck([
            "ModuleWideSwitch.swift", "StillImportsFoundation.swift", "BothImportsSwitched.swift", "XCTestAndSimulated.swift",
        ])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Written out, or in a file beside a `fileprivate` switch, `UserDefaults`
    /// is Foundation's, and the compiler says nothing.
    @Test func foundationsClassIsChosenSilentlyWhereNoSwitchReaches() throws {
        let result = try Self.typeCheck(["ExplicitFoundation.swift", "FileprivateSwitch.swift", "UnswitchedFoundationFile.swift"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// A key-value observer in a file that imports Foundation too is a
    /// compile error until the module switches `NSObject` as well.
    @Test func anObserverNeedsTheNSObjectSwitchAndIsNeverSilent() throws {
        let without = try Self.typeCheck(["ModuleWideSwitch.swift", "KeyValueObserverFile.swift"])
        #expect(without.status != 0)
        #expect(without.stderr.contains("'NSObject' is ambiguous"), "\(without.stderr)")
        let with = try Self.typeCheck(["ModuleWideSwitch.swift", "NSObjectSwitch.swift", "KeyValueObserverFile.swift"])
        #expect(with.status == 0, "\(with.stderr)")
    }

    /// A library that wraps UserDefaults declares its own `Observation`,
    /// `Key`, `Change`, `subscript(key:)` … in an extension of Apple's types:
    /// none of them meets a name of the simulation's, whose own calls are in
    /// `GroupSim` (it had `UserDefaults.Observation`, and cookpad's library did
    /// not compile: "'Observation' is ambiguous for type lookup").
    @Test func aWrapperLibrarysNamesInExtensionsMeetNoneOfTheSimulations() throws {
        let result = try Self.typeCheck(["WrapperLibraryNames.swift"], options: ["-warnings-as-errors"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Apple's initializers are the designated ones: a test's mock subclass
    /// inherits `init()` and `init?(suiteName:)`, or calls `super.init(suiteName:)`
    /// from an initializer of its own.
    @Test func aSubclassHasApplesInitializers() throws {
        let result = try Self.typeCheck(["AppleSubclasses.swift"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// `synchronize()` of both stores is `@discardableResult`, as on Apple platforms.
    @Test func synchronizeCanBeCalledForItsEffect() throws {
        let result = try Self.typeCheck(["DiscardableResults.swift"], options: ["-warnings-as-errors"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Run under the simulation, an executable that also uses Foundation's
    /// own UserDefaults (here through a dependency that imports Foundation)
    /// says so at once, naming what it uses; a switched one says nothing.
    @Test func foundationsUserDefaultsInTheExecutableIsReportedAtRunTime() throws {
        let root = TemporaryRoot()
        let build = root.path + "/build"
        try FileManager.default.createDirectory(atPath: build, withIntermediateDirectories: true)
        let kit = try runProcess(
            "/usr/bin/env",
            [
                "swiftc", "-parse-as-library", "-emit-module", "-emit-object", "-module-name", "SettingsKit",
                "-emit-module-path", build + "/SettingsKit.swiftmodule", "-o", build + "/SettingsKit.o", Self.fixtures + "/Run/SettingsKit.swift",
            ])
        try #require(kit.status == 0, "\(kit.stderr)")
        try Self.link(["Run/UsesSettingsKit.swift"], extra: ["-I", build, build + "/SettingsKit.o"], output: build + "/mixed")
        try Self.link(
            ["Run/Switched/main.swift", "ModuleWideSwitch.swift", "StillImportsFoundation.swift", "BothImportsSwitched.swift"],
            output: build + "/switched")

        let simulation = ["GROUPSIM_ROOT": root.path, "GROUPSIM_BUNDLE_ID": "com.example.notes", "GROUPSIM_DEVICE": "iPhone"]
        let mixed = try runProcess(build + "/mixed", [], environment: simulation)
        #expect(mixed.status == 0, "\(mixed.stderr)")
        #expect(mixed.stdout.contains("simulated=dark") && mixed.stdout.contains("kit=nil"), "\(mixed.stdout)")
        #expect(mixed.stderr.contains("this executable also uses Foundation's own UserDefaults"), "\(mixed.stderr)")
        #expect(mixed.stderr.contains("Foundation.UserDefaults.standard.getter"), "\(mixed.stderr)")
        #expect(mixed.stderr.components(separatedBy: "Foundation's own UserDefaults").count == 2, "said once")

        let switched = try runProcess(build + "/switched", [], environment: simulation)
        #expect(switched.status == 0, "\(switched.stderr)")
        #expect(switched.stdout.contains("switched=ran"))
        #expect(!switched.stderr.contains("Foundation's own UserDefaults"), "\(switched.stderr)")

        // Not started under the simulation (no bundle named): not checked.
        let outside = try runProcess(build + "/mixed", [], environment: ["GROUPSIM_ROOT": root.path])
        #expect(!outside.stderr.contains("Foundation's own UserDefaults"), "\(outside.stderr)")
    }

    /// The examples, run as the example app, use the simulated class only.
    @Test func theExamplesUseNoFoundationUserDefaults() throws {
        #expect(try FoundationDefaultsCheck.foundationUserDefaultsUses(inExecutable: BuiltExecutable.path("settings-examples")).isEmpty)
        let root = try rootWithExampleApp()
        let run = try ExampleRun(["reading-show"], target: "widget", root: root)
        #expect(run.status == 0 && !run.stderr.contains("Foundation's own UserDefaults"), "\(run.stderr)")
    }

    /// A file that is not an ELF executable, or is cut short, is a clear error.
    @Test func whatTheCheckCannotReadIsAnError() throws {
        let root = TemporaryRoot()
        let text = root.path + "/text"
        try Data("not an executable".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: FoundationDefaultsCheck.CheckError.self) { try FoundationDefaultsCheck.foundationUserDefaultsUses(inExecutable: text) }
        let cut = root.path + "/cut"
        let executable = try Data(contentsOf: URL(fileURLWithPath: BuiltExecutable.path("settings-examples")))
        for length in [16, 64, 4096, executable.count / 2] {
            try executable.prefix(length).write(to: URL(fileURLWithPath: cut))
            #expect(throws: FoundationDefaultsCheck.CheckError.self, "\(length) bytes") {
                try FoundationDefaultsCheck.foundationUserDefaultsUses(inExecutable: cut)
            }
        }
        #expect(throws: FoundationDefaultsCheck.CheckError.self) {
            try FoundationDefaultsCheck.foundationUserDefaultsUses(inExecutable: root.path + "/absent")
        }
    }
}
