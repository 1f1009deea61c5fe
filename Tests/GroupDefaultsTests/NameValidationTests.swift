import Foundation
import Testing

@testable import GroupDefaults

/// Names that become file and folder names, and the device a command acts on.
@Suite struct NameValidationTests {
    @Test func namesThatWouldGarbleALineAreRefused() throws {
        for (name, problem) in [
            ("group.a\nb", "contains the control character U+000A at character 8"),
            ("tab\there", "contains the control character U+0009 at character 4"),
            ("del\u{7F}", "contains the control character U+007F at character 4"),
            ("c1\u{85}", "contains the control character U+0085 at character 3"),
            ("line\u{2028}sep", "contains the control character U+2028 at character 5"),
            ("bad\u{FFFD}utf8", "contains U+FFFD at character 4, what bytes that are not UTF-8 are read as"),
        ] {
            do {
                try DomainName.validate(name)
                Issue.record("\(name.debugDescription) was accepted")
            } catch {
                #expect("\(error)".contains(problem), "\(error)")
                #expect(!"\(error)".contains("\n"))
            }
        }
        try DomainName.validate("group.com.example.émoji-🙂")
    }

    @Test func anExplicitlyEmptyDeviceIsAnError() throws {
        #expect(throws: DefaultsError.self) { try SimulationRoot.resolveDevice(explicit: "", environment: ["GROUPSIM_DEVICE": "iPad"]) }
        #expect(throws: DefaultsError.self) { try SimulationRoot.resolveDevice(explicit: "a\nb", environment: [:]) }
        #expect(throws: DefaultsError.self) { try SimulationRoot.resolveDevice(explicit: nil, environment: ["GROUPSIM_DEVICE": "a\u{FFFD}"]) }
        #expect(try SimulationRoot.resolveDevice(explicit: nil, environment: ["GROUPSIM_DEVICE": ""]) == "iPhone")
        #expect(try SimulationRoot.resolveDevice(explicit: nil, environment: ["GROUPSIM_DEVICE": "iPad"]) == "iPad")
        #expect(try SimulationRoot.resolveDevice(explicit: "Watch", environment: ["GROUPSIM_DEVICE": "iPad"]) == "Watch")
    }
}
