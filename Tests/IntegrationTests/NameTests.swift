import Foundation
import TestSupport
import Testing

/// Names that cannot be file names, or would garble the lines that show
/// them, are refused by the real tools before anything is touched.
@Suite struct NameTests {
    let root = TemporaryRoot()
    let group = "group.com.example.notes"

    /// `groupsim` in this test's root, killed (and failing the test) if it hangs.
    func tool(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try groupsimBounded(arguments, root: root, environment: environment)
    }

    @Test func namesWithControlCharactersOrReplacementCharactersAreRefused() throws {
        let newline = try tool(["defaults", "write", "group.a\nb", "k", "v"])
        #expect(newline.status != 0)
        #expect(newline.stderr.contains("\"group.a\\nb\": it contains the control character U+000A at character 8"))
        let bell = try tool(["defaults", "read", "--device", "i\u{7}Phone", "group.com.example.notes"])
        #expect(bell.stderr.contains("invalid device name \"i\\u{07}Phone\": it contains the control character U+0007 at character 2"))
        let replaced = try tool(["defaults", "write", "group.\u{FFFD}x", "k", "v"])
        #expect(replaced.status != 0)
        #expect(replaced.stderr.contains("contains U+FFFD at character 7"))
        let created = try tool(["device", "create", "tab\there"])
        #expect(created.stderr.contains("invalid device name \"tab\\there\""))
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices"))
    }

    @Test func anExplicitlyEmptyDeviceIsAnErrorNotTheDefault() throws {
        let tool = try tool(["defaults", "write", "--device", "", group, "k", "v"])
        #expect(tool.status != 0)
        #expect(tool.stderr.contains("invalid device name \"\": it is empty (--device '')"))
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices"))
        let app = try runBounded(BuiltExecutable.path("main-app"), ["--json", "--device", ""], environment: ["GROUPSIM_ROOT": root.path])
        #expect(app.status == 1)
        #expect(app.stdout.contains("\"event\":\"error\""))
        #expect(app.stdout.contains("it is empty (--device '')"))
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices"))
    }
}
