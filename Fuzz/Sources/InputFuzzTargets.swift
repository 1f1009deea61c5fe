import AppModel
import AppProtocol
import Foundation
import GroupDefaults
import PropertyList
import ScenarioModel
import SpecFormat

/// Text that reaches the processes from outside: launch arguments, protocol
/// requests, scenario files. Each must give a value or an error, never a crash.
enum InputFuzzTargets {
    /// Arguments separated by NUL bytes, as the kernel hands them to a process.
    static func launchArguments(_ data: Data) {
        let arguments = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let domain = ArgumentDomain.parse(arguments, report: { _ in })
        PlistFuzzTargets.checkWriters(.dictionary(domain))
    }

    /// One request line of the JSON protocol.
    static func controlProtocol(_ data: Data) {
        let (id, _) = ControlProtocol.parseRequest(String(decoding: data, as: UTF8.self))
        // The id is echoed into the response line: it must be JSON itself.
        require((try? JSONSerialization.jsonObject(with: Data(id.utf8), options: .fragmentsAllowed)) != nil, "response id \(id) is not JSON")
    }

    /// What the scenario target's files name beyond themselves, fixed in
    /// memory so that no input reaches the disk: an executable of each kind
    /// and one manifest (the names are in Fuzz/dictionaries/scenario.dict).
    static let fuzzFiles = FixedScenarioFiles(
        executables: [
            "./app": .found(path: "/fuzz/app", linkage: .links),
            "./tool": .found(path: "/fuzz/tool", linkage: .doesNotLink),
            "./script": .found(path: "/fuzz/script", linkage: .unreadable("'/fuzz/script' is not a 64-bit little-endian ELF executable")),
            "./folder": .notRunnable(path: "/fuzz/folder"),
            "sh": .found(path: "/usr/bin/sh", linkage: .doesNotLink),
        ],
        manifests: [
            "apps/notes.yaml": """
            name: Notes
            targets:
              main-app: { bundle-id: com.example.notes, app-groups: [group.com.example.notes], icloud-kvs: com.example.notes }
              widget: { bundle-id: com.example.notes.widget, app-groups: [group.com.example.notes], shows: [theme] }
            """
        ])

    /// A scenario file's text.
    static func scenario(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        _ = try? ScenarioParser.parse(SpecNode.parse(text, file: "fuzz-input.yaml"), fileSystem: fuzzFiles)
    }
}
