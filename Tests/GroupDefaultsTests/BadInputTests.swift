import Foundation
import PropertyList
import TestSupport
import Testing

@testable import GroupDefaults
@testable import SharedFiles

@Suite(.serialized) struct BadInputTests {
    /// Diagnostics said during one test (TestSupport); it looks for its own paths only.
    typealias Collected = CollectedDiagnostics

    func writeFile(_ path: String, _ contents: String) throws {
        try createDirectories((path as NSString).deletingLastPathComponent)
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func aCorruptFileIsMovedAsideNotOverwritten() throws {
        let collected = Collected()
        let f = Fixture()
        let path = f.root.groupSuitePath(f.group)
        try writeFile(path, "this is not a plist")
        let defaults = try f.suite()
        #expect(defaults.value(forKey: "anything") == nil)
        #expect(collected.all.contains { $0.kind == .reloadFailed && $0.message.contains(path) })

        defaults.set("fresh", forKey: "k")
        try defaults.flush()
        let moved = collected.all.first { $0.kind == .corruptFileMovedAside && $0.message.contains(path) }
        #expect(moved != nil)
        let aside = try #require(moved?.path)
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: aside)), as: UTF8.self) == "this is not a plist")
        #expect(try SharedPlistFileContents.read(path) == ["k": "fresh"])
    }

    @Test func aRootThatIsNotADictionaryIsNamed() throws {
        let f = Fixture()
        let path = f.root.groupSuitePath(f.group)
        try createDirectories((path as NSString).deletingLastPathComponent)
        try BinaryPropertyList.encode(["an", "array"]).write(to: URL(fileURLWithPath: path))
        let file = try SharedPlistFile(path: path)
        do {
            _ = try file.read()
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains(path))
            #expect("\(error)".contains("array, not a dictionary"))
        }
    }

    @Test func aSymlinkOutOfTheRootIsRefused() throws {
        let f = Fixture()
        let outside = TemporaryRoot()
        let groups = "\(f.root.path)/devices/iPhone/Containers/Shared/AppGroup"
        try createDirectories(groups)
        #expect(symlink(outside.path, "\(groups)/\(f.group)") == 0)
        do {
            _ = try f.suite()
            Issue.record("expected an error")
        } catch {
            #expect(error as? SharedFileError == .symbolicLink(path: "\(groups)/\(f.group)"))
            #expect("\(error)".contains("is a symbolic link; the simulation root must contain real folders"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test func aFolderRecreatedAfterAnEraseIsConfinedToo() throws {
        let collected = Collected()
        let f = Fixture()
        let defaults = try f.suite()
        defaults.set("before", forKey: "k")
        try defaults.flush()
        // The device is erased under the running process, and a link now
        // stands where the group container was.
        try FileManager.default.removeItem(atPath: f.root.path + "/devices")
        let outside = TemporaryRoot()
        let groups = "\(f.root.path)/devices/iPhone/Containers/Shared/AppGroup"
        try createDirectories(groups)
        #expect(symlink(outside.path, "\(groups)/\(f.group)") == 0)
        defaults.set("after", forKey: "k")
        #expect(throws: SharedFileError.symbolicLink(path: "\(groups)/\(f.group)")) { try defaults.flush() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        _ = collected
    }

    @Test func aSymlinkedPlistIsNotFollowed() throws {
        let f = Fixture()
        let path = f.root.groupSuitePath(f.group)
        try createDirectories((path as NSString).deletingLastPathComponent)
        let outside = TemporaryRoot()
        try BinaryPropertyList.encode(["secret": "x"]).write(to: URL(fileURLWithPath: outside.path + "/target.plist"))
        #expect(symlink(outside.path + "/target.plist", path) == 0)
        #expect(throws: SharedFileError.notARegularFile(path: path, kind: "a symbolic link")) { try SharedPlistFile(path: path).read() }
    }

    @Test func filesAndFoldersArePrivate() throws {
        let f = Fixture()
        let defaults = try f.suite()
        defaults.set(1, forKey: "k")
        try defaults.flush()
        var info = stat()
        stat(f.root.groupSuitePath(f.group), &info)
        #expect(info.st_mode & 0o777 == 0o600)
        stat((f.root.groupSuitePath(f.group) as NSString).deletingLastPathComponent, &info)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    @Test func aMissingEntitlementIsReportedLoudly() throws {
        let collected = Collected()
        let f = Fixture()
        let widget = try f.suite("com.example.app.widget", groups: [])
        widget.set("private", forKey: "k")
        try widget.flush()
        let report = try #require(collected.all.first { $0.kind == .missingEntitlement && $0.message.contains(f.root.path) })
        #expect(report.message.contains("com.example.app.widget is not entitled to app group \(f.group)"))
        #expect(!FileManager.default.fileExists(atPath: f.root.groupSuitePath(f.group)))
        #expect(try SharedPlistFileContents.read(f.root.appDomainPath("com.example.app.widget", domain: f.group)) == ["k": "private"])
    }

    /// Said once per process and suite, as the iCloud store's is: not at every
    /// open of the suite (each `UserDefaults(suiteName:)`, each `addSuite`).
    @Test func aMissingEntitlementIsReportedOncePerSuite() throws {
        let collected = Collected()
        let f = Fixture()
        let context = f.context("com.example.app.widget", groups: [])
        func warnings(_ suite: String) -> Int {
            collected.all.filter { $0.kind == .missingEntitlement && $0.message.contains("app group \(suite) ") && $0.message.contains(f.root.path) }
                .count
        }
        let first = try GroupDefaults(suiteName: f.group, context: context, processDomains: f.process)
        let second = try GroupDefaults(suiteName: f.group, context: context, processDomains: f.process)
        let standard = try GroupDefaults(context: context, processDomains: f.process)
        try standard.addSuite(named: f.group)
        #expect(warnings(f.group) == 1)
        let other = "group.com.example.other"
        try standard.addSuite(named: other)
        #expect(warnings(other) == 1)
        withExtendedLifetime((first, second)) {}
    }

    /// What a writer accepts, every reader must read: a value nested past the
    /// readers' limit is refused where it enters, and the file is untouched.
    @Test func aValueNestedPastTheReadersLimitIsRefusedNotWritten() throws {
        let collected = Collected()
        let f = Fixture()
        let defaults = try f.suite()
        defaults.set("kept", forKey: "k")
        try defaults.flush()
        let path = f.root.groupSuitePath(f.group)
        let fileBefore = try Data(contentsOf: URL(fileURLWithPath: path))
        var deep = PlistValue.string("bottom")
        // The domain's dictionary is the file's first level, so a value may nest one level less.
        for _ in 0..<PlistLimits.maximumDepth { deep = .array([deep]) }

        defaults.set(deep, forKey: "deep")
        #expect(defaults.value(forKey: "deep") == nil)
        #expect(collected.all.contains { $0.kind == .valueRefused && $0.message.contains("key \"deep\"") && $0.message.contains("511") })
        let refused = #expect(throws: PlistError.self) { try defaults.transaction { $0["deep"] = deep } }
        if case .tooDeep? = refused {} else { Issue.record("not refused as too deep: \(String(describing: refused))") }
        try defaults.setPersistentDomain(["deep": deep], forName: f.group)
        try defaults.flush()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == fileBefore)

        // One level less is fine, and reads back.
        guard case .array(let inner) = deep else {
            Issue.record("the nested value is not an array: \(deep)")
            return
        }
        defaults.set(inner[0], forKey: "deep")
        try defaults.flush()
        #expect(try SharedPlistFileContents.read(path)["deep"] == inner[0])
    }
}
