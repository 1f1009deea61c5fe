import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// Intents that run in the app's own process (manifest `intents: in-app`):
/// the `perform-intent` request, its codec, and real main-app and widget processes.
@Suite struct InAppIntentTests {
    let root = TemporaryRoot()

    static func app(intents placement: String) -> String {
        """
        name: Test
        intents: \(placement)
        targets:
          main-app:
            bundle-id: com.example.test
            app-groups: [group.com.example.test]
          widget:
            bundle-id: com.example.test.widget
            app-groups: [group.com.example.test]
            shows: [note]
          intent-extension:
            bundle-id: com.example.test.intents
            app-groups: [group.com.example.test]
            intents:
              SetNote: { set: note, parameter: text }
              Count: { increment: count, by: 2 }
        """
    }

    func manifest(intents placement: String) throws -> String {
        let path = root.path + "/manifest-\(placement).yaml"
        try Self.app(intents: placement).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func performIntentRoundTripsThroughTheCodec() throws {
        for request in [
            AppRequest.performIntent(name: "SetNote", parameters: ["text": "a \"quoted\" (note)", "other": ""]),
            .performIntent(name: "Count", parameters: [:]),
        ] {
            let line = ControlProtocol.requestLine(id: 7, request)
            let (id, parsed) = ControlProtocol.parseRequest(line)
            #expect(id == "7")
            #expect(try parsed.get() == request, "\(line)")
        }
        // Without params: none.
        #expect(
            try ControlProtocol.parseRequest(#"{"id":1,"cmd":"perform-intent","intent":"Count"}"#).request.get()
                == .performIntent(name: "Count", parameters: [:]))
        let refusals = [
            (#"{"id":2,"cmd":"perform-intent"}"#, #"perform-intent: missing "intent" (a string)"#),
            (
                #"{"id":3,"cmd":"perform-intent","intent":"SetNote","params":{"text":1}}"#,
                #"perform-intent: "params" values must be strings, found 1"#
            ),
            (#"{"id":4,"cmd":"perform-intent","intent":"SetNote","params":[1]}"#, #"perform-intent: "params" must be an object"#),
        ]
        for (line, message) in refusals {
            guard case .failure(let error) = ControlProtocol.parseRequest(line).request else {
                Issue.record("\(line) was accepted")
                continue
            }
            #expect(error.description == message)
        }
    }

    @Test func theAppPerformsTheIntentAsItsOwnChangeAndTheWidgetHearsIt() throws {
        let path = try manifest(intents: "in-app")
        let main = try AppProcess("main-app", root: root, manifest: path)
        let widget = try AppProcess("widget", root: root, manifest: path)
        #expect(main.ready["launch"] == nil)
        let answer = try main.request(.performIntent(name: "SetNote", parameters: ["text": "milk"]))
        #expect(answer.ok && answer.value == .string("milk") && answer.domain == "group.com.example.test", "\(answer.fields)")
        // In memory at once: the app's own read, no reload from disk.
        #expect(try main.get("note").value == .string("milk"))
        #expect(try main.change("note") { $0 == .string("milk") }.origin == "this-process")
        let result = try main.event { if case .intentResult = $0 { true } else { false } }
        #expect(result == .intentResult(intent: "SetNote", key: "note", value: .string("milk")))
        #expect(try widget.change("note") { $0 == .string("milk") }.origin == "other-process")
        // The extension's checks are the same code: an unknown intent or parameter is refused, the app goes on.
        let unknown = try main.request(.performIntent(name: "Fly", parameters: [:]))
        #expect(!unknown.ok && unknown.error?.contains("unknown intent 'Fly'; this app knows: Count, SetNote") == true, "\(unknown.fields)")
        let missing = try main.request(.performIntent(name: "SetNote", parameters: [:]))
        #expect(missing.error == "intent SetNote needs text=VALUE", "\(missing.fields)")
        #expect(try main.request(.performIntent(name: "Count", parameters: [:])).value == .integer(2))
    }

    @Test func aBackgroundLaunchSaysSoInItsReadyEvent() throws {
        let main = try AppProcess("main-app", root: root, manifest: try manifest(intents: "in-app"), arguments: ["--background"])
        #expect(main.ready["launch"] == .string("background"))
    }

    @Test func anAppWhoseIntentsRunInTheExtensionRefusesToPerformThem() throws {
        let path = try manifest(intents: "extension")
        let main = try AppProcess("main-app", root: root, manifest: path)
        let refused = try main.request(.performIntent(name: "SetNote", parameters: ["text": "x"]))
        #expect(refused.error?.contains("runs its intents in its intent extension (manifest intents: extension)") == true, "\(refused.fields)")
        #expect(try main.get("note").value == nil)
        let widget = try AppProcess("widget", root: root, manifest: path)
        #expect(try widget.request(.performIntent(name: "SetNote", parameters: ["text": "x"])).error?.contains("the widget runs no intents") == true)
    }
}
