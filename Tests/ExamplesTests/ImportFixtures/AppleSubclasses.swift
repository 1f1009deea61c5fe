// Subclasses as tests write them on Apple platforms: a mock that inherits
// Apple's initializers, and one with an initializer of its own that calls
// `super.init(suiteName:)`, Apple's designated initializer.
import SimulatedFoundation

final class RecordingDefaults: UserDefaults {
    private(set) var written: [String] = []

    override func set(_ value: Any?, forKey defaultName: String) {
        written.append(defaultName)
        super.set(value, forKey: defaultName)
    }
}

final class NamedDefaults: UserDefaults {
    let name: String

    init?(testName: String) {
        name = testName
        super.init(suiteName: "tests.\(testName)")
    }

    required init?(suiteName: String?) {
        name = suiteName ?? "standard"
        super.init(suiteName: suiteName)
    }
}

final class MockCloudStore: NSUbiquitousKeyValueStore {
    override func string(forKey aKey: String) -> String? { "mock" }
}

func makeSubclasses() -> [Any?] {
    [RecordingDefaults(), RecordingDefaults(suiteName: "tests.recording"), NamedDefaults(testName: "theme"), MockCloudStore()]
}
