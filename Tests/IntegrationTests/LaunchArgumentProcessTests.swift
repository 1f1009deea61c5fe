import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// A simulated app launched with awkward arguments: it starts, warns about the
/// one that is not the property list it looks like, and reads the rest as iOS does.
@Suite struct LaunchArgumentProcessTests {
    @Test func anUnparsableArgumentWarnsAndTheLaunchGoesOn() throws {
        let root = TemporaryRoot()
        let main = try AppProcess(
            "main-app", root: root,
            launchArguments: ["-theme", "(oops", "-verbose", "-fontSize", " <integer>20</integer>\n", "-neg", "-7"])
        let warning = try main.warning()
        #expect(warning.kind == "launch-argument")
        #expect(warning.message.contains("launch argument -theme"))
        #expect(try main.get("theme") == (.string("(oops"), "NSArgumentDomain"))
        #expect(try main.get("fontSize") == (.integer(20), "NSArgumentDomain"))
        #expect(try main.get("verbose").value == nil)
        #expect(try main.get("neg").value == nil)
        main.closeInput()
        #expect(try main.waitForExit() == 0)
    }
}
