import Foundation
import TestSupport
import Testing

/// A Codable struct saved as JSON data in one launch and loaded in the next.
@Suite struct AudioPreferencesTests {
    @Test func savedInOneProcessLoadedInTheNext() throws {
        let root = try rootWithExampleApp()
        let fresh = try ExampleRun(["audio-load"], root: root)
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect([fresh["volume"], fresh["bass"], fresh["treble"]] == ["1.0", "0.5", "0.5"])

        let saved = try ExampleRun(["audio-save", "0.3", "0.7"], root: root)
        #expect([saved["volume"], saved["bass"]] == ["0.3", "0.7"])
        let loaded = try ExampleRun(["audio-load"], root: root)
        #expect([loaded["volume"], loaded["bass"], loaded["treble"]] == ["0.3", "0.7", "0.5"])

        // The standard defaults are the target's own: the widget has none saved.
        #expect(try ExampleRun(["audio-load"], target: "widget", root: root)["volume"] == "1.0")
    }
}
