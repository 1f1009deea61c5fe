import Foundation
import Testing
import TestSupport

/// What `UserDefaults` means in a user's file, checked by the compiler: the
/// sources in ImportFixtures/ are type-checked with swiftc against the built
/// SimulatedFoundation module.
@Suite struct ImportResolutionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ImportFixtures").path
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Type-checks the fixtures as one module; the compiler's status and messages.
    static func typeCheck(_ files: [String]) throws -> ProcessResult {
        try runProcess("/usr/bin/env", [
            "swiftc", "-typecheck", "-module-name", "UserModule",
            "-I", BuiltExecutable.directory + "/Modules",
            // GroupDefaults' module map for libinotifytools, as SwiftPM passes it.
            "-I", packageRoot + "/Sources/CInotifyTools",
        ] + files.map { fixtures + "/" + $0 })
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
}
