import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// On a device that reads through cfprefsd's cache (macOS), real app
/// processes ignore a hand edit of their plist and write their view back
/// over it, while a change through `groupsim defaults` reaches them.
@Suite struct PreferencesCacheProcessTests {
    let root = TemporaryRoot()

    func groupFile(_ device: String) -> String {
        root.path + "/devices/\(device)/Containers/Shared/AppGroup/group.com.example.notes/Library/Preferences/group.com.example.notes.plist"
    }

    /// Rewrites the plist in place with one key changed, as an editor does.
    func editByHand(_ path: String, key: String, value: PlistValue) throws {
        guard case .dictionary(var contents) = try BinaryPropertyList.decode(try Data(contentsOf: URL(fileURLWithPath: path))) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        contents[key] = value
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: BinaryPropertyList.encode(.dictionary(contents)))
    }

    func onDisk(_ path: String, _ key: String) throws -> PlistValue? {
        guard case .dictionary(let contents) = try BinaryPropertyList.decode(try Data(contentsOf: URL(fileURLWithPath: path))) else { return nil }
        return contents[key]
    }

    @Test func aHandEditIsIgnoredAndOverwrittenButTheDefaultsToolIsSeen() throws {
        #expect(try groupsim(["device", "create", "Mac", "--platform", "macOS"], root: root).status == 0)
        let app = try AppProcess("main-app", root: root, device: "Mac")
        try app.set("theme", "light")
        _ = try app.request(.synchronize)
        try editByHand(groupFile("Mac"), key: "theme", value: "dark")
        // A read that must answer for other processes' writes still finds the cached value.
        #expect(try app.get("theme").value == "light")
        try app.set("lastNote", "after the edit")
        _ = try app.request(.synchronize)
        #expect(try onDisk(groupFile("Mac"), "theme") == "light")

        let tool = try groupsim(["defaults", "write", "--device", "Mac", "group.com.example.notes", "theme", "-string", "dark"], root: root)
        #expect(tool.status == 0, "\(tool.stderr)")
        #expect(try app.change("theme") { $0 == "dark" }.origin == "other-process")
    }

    @Test func withoutTheCacheTheHandEditIsSeen() throws {
        #expect(try groupsim(["device", "create", "Mac", "--platform", "macOS", "--preferences-cache", "off"], root: root).status == 0)
        let app = try AppProcess("main-app", root: root, device: "Mac")
        try app.set("theme", "light")
        _ = try app.request(.synchronize)
        try editByHand(groupFile("Mac"), key: "theme", value: "dark")
        try app.change("theme") { $0 == "dark" }
        try app.set("lastNote", "after the edit")
        _ = try app.request(.synchronize)
        #expect(try onDisk(groupFile("Mac"), "theme") == "dark")
    }
}
