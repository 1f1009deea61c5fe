import SimulatedSwiftUI
import TestSupport
import Testing

@testable import SettingsExamples

/// `@AppStorage` in this test process (the harness's simulated app), each
/// test over a suite of its own.
@Suite struct AppStorageTests {
    private static func freshSuite(_ name: String = #function) -> UserDefaults {
        ExampleProcess.start()
        return UserDefaults(suiteName: "appstorage-\(name.prefix { $0 != "(" })-\(UUID().uuidString)")!
    }

    private enum Mode: String { case light, dark }
    private enum Size: Int {
        case small = 1
        case large = 2
    }

    @Test func theDeclaredDefaultIsNeitherWrittenNorRegistered() {
        let store = Self.freshSuite()
        @AppStorage("theme", store: store) var theme = "dark"
        #expect(theme == "dark")
        #expect(store.object(forKey: "theme") == nil)
        #expect(store.volatileDomain(forName: UserDefaults.registrationDomain)["theme"] == nil)
        // A second declaration with another default answers with its own.
        @AppStorage("theme", store: store) var otherTheme = "light"
        #expect(otherTheme == "light")
    }

    @Test func everyReadAsksTheStoreAndEveryWriteSetsIt() {
        let store = Self.freshSuite()
        @AppStorage("count", store: store) var count = 1
        let elsewhere = UserDefaults(suiteName: GroupSim.groupDefaults(of: store).domainName)!
        elsewhere.set(5, forKey: "count")
        #expect(count == 5)
        count = 7
        #expect(elsewhere.integer(forKey: "count") == 7)
        elsewhere.removeObject(forKey: "count")
        #expect(count == 1)
    }

    @Test func eachTypeIsStoredAsUserDefaultsStoresIt() {
        let store = Self.freshSuite()
        @AppStorage("bool", store: store) var bool = false
        @AppStorage("double", store: store) var double = 0.5
        @AppStorage("string", store: store) var string = ""
        @AppStorage("url", store: store) var url = URL(string: "https://example.com")!
        @AppStorage("data", store: store) var data = Data()
        @AppStorage("mode", store: store) var mode = Mode.light
        @AppStorage("size", store: store) var size = Size.small
        bool = true
        double = 2.25
        string = "notes"
        url = URL(fileURLWithPath: "/tmp/notes")
        data = Data([1, 2, 3])
        mode = .dark
        size = .large
        #expect(store.object(forKey: "bool") as? Bool == true)
        #expect(store.double(forKey: "double") == 2.25)
        #expect(store.string(forKey: "string") == "notes")
        #expect(store.url(forKey: "url") == URL(fileURLWithPath: "/tmp/notes"))
        #expect(store.data(forKey: "data") == Data([1, 2, 3]))
        #expect(store.string(forKey: "mode") == "dark")
        #expect(store.integer(forKey: "size") == 2)
        #expect(bool && double == 2.25 && string == "notes" && data == Data([1, 2, 3]) && mode == .dark && size == .large)
        #expect(url == URL(fileURLWithPath: "/tmp/notes"))
    }

    @Test func aValueOfAnotherTypeOrNoCaseReadsAsTheDefault() {
        let store = Self.freshSuite()
        @AppStorage("count", store: store) var count = 3
        @AppStorage("mode", store: store) var mode = Mode.light
        store.set("many", forKey: "count")
        store.set("sepia", forKey: "mode")
        #expect(count == 3)
        #expect(mode == .light)
    }

    @Test func optionalsReadNilWhileAbsentAndNilRemoves() {
        let store = Self.freshSuite()
        @AppStorage("note", store: store) var note: String?
        @AppStorage("level", store: store) var level: Int?
        @AppStorage("mode", store: store) var mode: Mode?
        @AppStorage("size", store: store) var size: Size?
        #expect(note == nil && level == nil && mode == nil && size == nil)
        note = "groceries"
        level = 0
        mode = .dark
        size = .small
        #expect(note == "groceries" && level == 0 && mode == .dark && size == .small)
        note = nil
        mode = nil
        #expect(store.object(forKey: "note") == nil)
        #expect(store.object(forKey: "mode") == nil)
        #expect(store.integer(forKey: "size") == 1)
    }

    @Test func theProjectedBindingReadsAndWritesTheSameKey() {
        let store = Self.freshSuite()
        @AppStorage("showPreview", store: store) var showPreview = true
        let binding = $showPreview
        binding.wrappedValue = false
        #expect(store.object(forKey: "showPreview") as? Bool == false)
        store.set(true, forKey: "showPreview")
        #expect(binding.wrappedValue == true)
        #expect(binding.projectedValue.wrappedValue == true)
    }

    /// The only test that sets the process's default store: the others name theirs.
    @Test func theDefaultStoreIsFoundAtEachAccess() {
        let suite = Self.freshSuite()
        @AppStorage("defaultStoreCheck") var value = "unset"
        GroupSim.defaultAppStorage(suite)
        value = "in the suite"
        GroupSim.defaultAppStorage(nil)
        #expect(suite.string(forKey: "defaultStoreCheck") == "in the suite")
        #expect(UserDefaults.standard.object(forKey: "defaultStoreCheck") == nil)
        #expect(value == "unset")
    }
}

/// The settings view of `Examples/SettingsExamples/NotesSettingsView.swift` in
/// real processes: the app's `@AppStorage` default is its own, so the widget
/// reading the shared suite gets nil until the app writes the setting.
@Suite struct AppStorageProcessTests {
    @Test func theWidgetDoesNotSeeTheAppsDeclaredDefault() throws {
        let root = try rootWithExampleApp()
        let app = try ExampleRun(["storage-show"], root: root)
        #expect(app.status == 0, "\(app.stderr)")
        #expect(app["theme"] == "dark")
        #expect(app["layout"] == "list")
        #expect(app["lastOpenedNote"] == "nil")
        #expect(app["stored-theme"] == "nil")

        let widget = try ExampleRun(["storage-widget"], target: "widget", root: root)
        #expect(widget.status == 0, "\(widget.stderr)")
        #expect(widget["theme"] == "nil")  // the trap: the app showed "dark"
        #expect(widget["widget-theme"] == "dark")  // the fix: the widget declares the same default
    }

    @Test func aChangeInTheAppReachesTheWidgetThroughTheSuite() throws {
        let root = try rootWithExampleApp()
        let changed = try ExampleRun(["storage-change", "light", "grid"], root: root)
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(changed["theme"] == "light")
        #expect(changed["layout"] == "grid")

        let widget = try ExampleRun(["storage-widget"], target: "widget", root: root)
        #expect(widget["theme"] == "light")
        #expect(widget["widget-theme"] == "light")
        // Written to the app group's suite, the default store the app set, not to its standard domain.
        let read = try groupsim(["defaults", "read", "group.com.example.notes", "layout"], root: root)
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "grid", "\(read.stderr)")
        #expect(try ExampleRun(["storage-show"], root: root)["layout"] == "grid")
    }
}
