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

    /// A scenario file's text.
    static func scenario(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        _ = try? ScenarioParser.parse(SpecNode.parse(text, file: "fuzz-input.yaml"))
    }
}
