import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// Suite files that are not what they should be: a FIFO, a huge sparse file,
/// a link; `groupsim` run for real must refuse them at once, with the path,
/// instead of hanging or aborting.
@Suite struct HostileFileTests {
    let root = TemporaryRoot()

    /// `groupsim` in this test's root, killed (and failing the test) if it hangs.
    func tool(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try groupsimBounded(arguments, root: root, environment: environment)
    }
    let group = "group.com.example.shared"

    var suitePath: String { root.groupSuitePath(group) }
    var folder: String { (suitePath as NSString).deletingLastPathComponent }

    func makeFolder() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func fileType(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    @Test func aFIFOInPlaceOfTheSuiteFileIsRefusedNotWaitedOn() throws {
        try makeFolder()
        #expect(mkfifo(suitePath, 0o600) == 0)
        let read = try tool(["defaults", "read", group])
        #expect(read.status != 0)
        #expect(read.stderr.contains("'\(suitePath)' is a FIFO (named pipe), not a regular file"))
        let write = try tool(["defaults", "write", group, "k", "v"])
        #expect(write.status != 0)
        #expect(write.stderr.contains("'\(suitePath)' is a FIFO (named pipe), not a regular file"))
        #expect(fileType(suitePath) == S_IFIFO)
    }

    @Test func aFIFOGivenToImportIsRefusedInOneSentenceAndNothingIsImported() throws {
        #expect(try tool(["defaults", "write", group, "k", "v"]).status == 0)
        let fifo = root.path + "/settings.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try tool(["defaults", "import", group, fifo])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains(
                "'\(fifo)' is a FIFO (named pipe), not a regular file, so it was neither read nor written; "
                    + "move it away or remove it. Nothing was imported."))
        #expect(try tool(["defaults", "read", group, "k"]).stdout == "v\n")
    }

    @Test func aFIFOInPlaceOfTheLockFileIsRefusedNotWaitedOn() throws {
        try makeFolder()
        let lock = folder + "/.\(group).plist.lock"
        #expect(mkfifo(lock, 0o600) == 0)
        let write = try tool(["defaults", "write", group, "k", "v"])
        #expect(write.status != 0)
        #expect(write.stderr.contains("'\(lock)' is a FIFO (named pipe), not a regular file"))
        #expect(fileType(suitePath) == nil)
    }

    @Test func aHugeSparseSuiteFileIsRefusedBeforeItIsRead() throws {
        try makeFolder()
        let descriptor = open(suitePath, O_WRONLY | O_CREAT, 0o600)
        #expect(descriptor >= 0)
        #expect(ftruncate(descriptor, 20 << 30) == 0)  // 20 GiB, no block allocated
        close(descriptor)
        let read = try tool(["defaults", "read", group])
        #expect(read.status == 1)
        #expect(
            read.stderr.contains(
                "'\(suitePath)' is 20.0 GiB (21474836480 bytes), more than the 16.0 MiB (16777216 bytes) a file of its kind may hold here"))
        #expect(read.stderr.contains("move it away or remove it"))
        let write = try tool(["defaults", "write", group, "k", "v"])
        #expect(write.status == 1)
        #expect(write.stderr.contains("is 20.0 GiB"))
        var info = stat()
        stat(suitePath, &info)
        #expect(info.st_size == 20 << 30)
    }

    @Test func aLinkOrFIFOLeftAsTheTemporaryIsReplacedNotFollowed() throws {
        try makeFolder()
        let outside = TemporaryRoot()
        let target = outside.path + "/target"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
        // Commits write their temporary in the scratch folder.
        #expect(mkdir(folder + "/.groupsim-scratch", 0o700) == 0)
        let temporary = folder + "/.groupsim-scratch/.\(group).plist.tmp"
        #expect(symlink(target, temporary) == 0)
        #expect(try tool(["defaults", "write", group, "k", "v1"]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("keep".utf8))
        #expect(mkfifo(temporary, 0o600) == 0)
        #expect(try tool(["defaults", "write", group, "k", "v2"]).status == 0)
        #expect(fileType(temporary) == nil)
        #expect(try tool(["defaults", "read", group, "k"]).trimmedOutput == "v2")
    }

    @Test func aFIFOAsAnInstalledManifestOrDeviceFileHangsNothing() throws {
        #expect(try tool(["app", "install"]).status == 0)
        let installed = root.path + "/devices/iPhone/Library/Installed"
        #expect(mkfifo(installed + "/com.example.fifo.yaml", 0o600) == 0)
        let list = try tool(["app", "list"])
        #expect(list.status != 0)
        #expect(list.stderr.contains("'\(installed)/com.example.fifo.yaml' is a FIFO (named pipe), not a regular file"))
        let install = try tool(["app", "install", "--manifest", installed + "/com.example.fifo.yaml"])
        #expect(install.status != 0)
        #expect(install.stderr.contains("is a FIFO (named pipe)"))
        #expect(mkfifo(root.path + "/devices/iPhone/device.plist", 0o600) == 0)
        #expect(try tool(["device", "list"]).trimmedOutput.hasPrefix("iPhone"))
    }

    /// A device settings file that cannot be read stops every app launching
    /// on the device; `device list` says so with the launch's own reason
    /// (it showed the device as an iOS device, as if nothing were wrong).
    @Test func aDeviceWhoseSettingsCannotBeReadIsListedWithTheReasonItsAppsCannotLaunch() throws {
        #expect(try tool(["app", "install"]).status == 0)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: root.path + "/devices/iPhone/device.plist"))
        let launch = try runBounded(BuiltExecutable.path("main-app"), ["--no-input"], environment: ["GROUPSIM_ROOT": root.path])
        #expect(launch.status != 0)
        let reason = "'\(root.path)/devices/iPhone/device.plist' is not a valid property-list dictionary"
        #expect((launch.stdout + launch.stderr).contains(reason), "\(launch.stdout)\(launch.stderr)")
        let list = try tool(["device", "list"]).stdout
        #expect(list.contains("iPhone  (settings unreadable, so no app launches on it: \(reason)") && !list.contains("iOS"), "\(list)")
    }

    @Test func aTemporaryLeftByAKilledWriterIsRemovedByTheNextWriterEvenALongRunningOne() throws {
        let notes = "group.com.example.notes"
        let preferences = (root.groupSuitePath(notes) as NSString).deletingLastPathComponent
        // A commit writes its temporary in the scratch folder.
        func temporaries() throws -> [String] {
            let scratch = preferences + "/.groupsim-scratch"
            return try
                (FileManager.default.contentsOfDirectory(atPath: preferences)
                + ((try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? [])).filter { $0.contains(".tmp") }
        }
        // A writer that has committed before, as a long-running app has.
        let main = try AppProcess("main-app", root: root)
        try main.set("k", 0)
        #expect(try main.request(.synchronize).ok)
        // Writers killed in a tight commit loop until one dies between creating its temporary and renaming it.
        var left: [String] = []
        for _ in 0..<200 where left.isEmpty {
            let writer = try RunningProcess(
                BuiltExecutable.path("groupsim-stress"), ["write-loop", "--domain", notes, "--key", "n"],
                environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
            try writer.waitForLine(timeout: 20) { $0.hasPrefix("ack ") }
            writer.signal(SIGKILL)
            try writer.waitForExit()
            left = try temporaries()
        }
        try #require(!left.isEmpty, "no writer died mid-write in 200 kills")
        try main.set("k", 1)
        #expect(try main.request(.synchronize).ok)
        #expect(try temporaries() == [])
        main.closeInput()
        #expect(try main.waitForExit() == 0)
    }
}
