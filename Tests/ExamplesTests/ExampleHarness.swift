import Foundation
import GroupDefaults
import SimulatedFoundation
import TestSupport

/// Runs an example command as a target of the example app (a real process,
/// through `groupsim exec`) and reads the `name=value` lines it prints.
struct ExampleRun {
    let status: Int32
    let values: [String: String]
    let stderr: String

    init(_ arguments: [String], target: String = "app", root: TemporaryRoot) throws {
        let result = try execAsExampleApp([BuiltExecutable.path("settings-examples")] + arguments, target: target, root: root)
        status = result.status
        stderr = result.stderr
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        self.values = values
    }

    subscript(name: String) -> String? { values[name] }
}

/// The simulated process that in-process example tests (the XCTest ones,
/// written as their originals) run as: the example app's main target, over a
/// temporary root that goes when the test process ends. Chosen once, before
/// the first use of `UserDefaults.standard`, as a scheme's environment would.
enum ExampleProcess {
    nonisolated(unsafe) private static var rootPath = ""

    private static let started: Void = {
        var template = Array((NSTemporaryDirectory() + "groupsim-examples-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            fatalError("cannot make a temporary simulation root: errno \(errno)")
        }
        rootPath = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        SimulatedProcess.use(
            SimulatedProcess(
                identity: ProcessIdentity(
                    root: SimulationRoot(path: rootPath), bundleIdentifier: "com.example.notes", appGroups: ["group.com.example.notes"])))
        // Saved first, then removed: nothing is left pending for the exit-time save.
        atexit {
            DomainRegistry.shared.synchronizeAll()
            try? FileManager.default.removeItem(atPath: ExampleProcess.rootPath)
        }
    }()

    static func start() { started }
}
