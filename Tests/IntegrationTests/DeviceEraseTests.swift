import Foundation
import TestSupport
import Testing

/// `groupsim device erase/delete` and `app uninstall` with symbolic links in
/// the device: a link is removed itself, and what it points to survives.
@Suite struct DeviceEraseTests {
    let root = TemporaryRoot()

    /// `groupsim` in this test's root, killed (and failing the test) if it hangs.
    func tool(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try groupsimBounded(arguments, root: root, environment: environment)
    }
    /// A folder outside the root, with files that must survive every command.
    let outside = TemporaryRoot()

    init() throws {
        try FileManager.default.createDirectory(atPath: outside.path + "/inner", withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: outside.path + "/precious.txt"))
        try Data("keep".utf8).write(to: URL(fileURLWithPath: outside.path + "/inner/also.txt"))
        try FileManager.default.createDirectory(atPath: root.path + "/devices", withIntermediateDirectories: true)
    }

    func outsideIsIntact() throws -> Bool {
        try FileManager.default.contentsOfDirectory(atPath: outside.path).sorted() == ["inner", "precious.txt"]
            && FileManager.default.contentsOfDirectory(atPath: outside.path + "/inner") == ["also.txt"]
    }

    func isLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    @Test func erasingADeviceThatIsALinkTouchesNothingAndDeletingItRemovesOnlyTheLink() throws {
        let device = root.path + "/devices/Evil"
        #expect(symlink(outside.path, device) == 0)
        let erase = try tool(["device", "erase", "Evil"])
        #expect(erase.status != 0)
        #expect(erase.stderr.contains("'\(device)' is a symbolic link, not a device folder; nothing was erased"))
        #expect(try outsideIsIntact())
        let list = try tool(["device", "list"])
        #expect(list.trimmedOutput.contains("Evil  (a symbolic link, not a device folder"))
        #expect(try tool(["device", "delete", "Evil"]).status == 0)
        #expect(!isLink(device))
        #expect(try outsideIsIntact())
    }

    @Test func aLinkNestedInADeviceIsRemovedNotFollowed() throws {
        #expect(try tool(["device", "create", "Phone"]).status == 0)
        #expect(try tool(["defaults", "write", "--device", "Phone", "group.com.example.shared", "k", "v"]).status == 0)
        let preferences = root.path + "/devices/Phone/Containers/Shared/AppGroup/group.com.example.shared/Library/Preferences"
        #expect(symlink(outside.path, preferences + "/escape") == 0)
        let data = root.path + "/devices/Phone/Containers/Data/Application"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        #expect(symlink(outside.path, data + "/com.example.linked") == 0)

        let erase = try tool(["device", "erase", "Phone"])
        #expect(erase.status == 0, "\(erase.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path + "/devices/Phone").sorted() == ["device.plist"])
        #expect(try outsideIsIntact())

        #expect(try tool(["defaults", "write", "--device", "Phone", "group.com.example.shared", "k", "v"]).status == 0)
        #expect(symlink(outside.path, preferences + "/escape") == 0)
        #expect(try tool(["device", "delete", "Phone"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices/Phone"))
        #expect(try outsideIsIntact())
    }

    @Test func uninstallingAnAppWhoseContainerIsALinkRemovesTheLinkOnly() throws {
        #expect(try tool(["app", "install"]).status == 0)
        let container = root.path + "/devices/iPhone/Containers/Data/Application/com.example.notes"
        try FileManager.default.removeItem(atPath: container)
        #expect(symlink(outside.path, container) == 0)
        let uninstall = try tool(["app", "uninstall", "com.example.notes"])
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(!isLink(container))
        #expect(try outsideIsIntact())
    }
}
