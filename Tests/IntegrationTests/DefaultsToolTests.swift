import Foundation
import PropertyList
import TestSupport
import Testing

/// `groupsim defaults`, run as a real process, checked by stdout, stderr, exit status and the files.
@Suite struct DefaultsToolTests {
    let root = TemporaryRoot()
    let group = "group.com.example.shared"

    func ok(_ arguments: [String], stdin: Data? = nil) throws -> String {
        let result = try groupsim(arguments, root: root, stdin: stdin)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result.trimmedOutput
    }

    func fails(_ arguments: [String]) throws -> ProcessResult {
        let result = try groupsim(arguments, root: root)
        #expect(result.status != 0, "\(arguments) should fail")
        return result
    }

    func onDisk() throws -> [String: PlistValue] {
        try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath(group))))
    }

    @Test func writesEachTypeAndReadsItBack() throws {
        _ = try ok(["defaults", "write", group, "s", "-string", "hello world"])
        _ = try ok(["defaults", "write", group, "i", "-int", "-7"])
        _ = try ok(["defaults", "write", group, "f", "-float", "2.5"])
        _ = try ok(["defaults", "write", group, "b", "-bool", "YES"])
        _ = try ok(["defaults", "write", group, "d", "-date", "2026-11-22T10:00:00Z"])
        _ = try ok(["defaults", "write", group, "x", "-data", "00ff10"])
        _ = try ok(["defaults", "write", group, "a", "-array", "one", "-int", "2"])
        _ = try ok(["defaults", "write", group, "m", "-dict", "k", "v", "n", "-int", "3"])
        _ = try ok(["defaults", "write", group, "p", "(x, y)"])
        _ = try ok(["defaults", "write", group, "plain", "just text"])
        let contents = try onDisk()
        #expect(contents["s"] == "hello world")
        #expect(contents["i"] == -7)
        #expect(contents["f"] == 2.5)
        #expect(contents["b"] == true)
        #expect(contents["d"] == .date(try Date("2026-11-22T10:00:00Z", strategy: .iso8601)))
        #expect(contents["x"] == .data(Data([0, 255, 16])))
        #expect(contents["a"] == ["one", 2])
        #expect(contents["m"] == ["k": "v", "n": 3])
        #expect(contents["p"] == ["x", "y"])
        #expect(contents["plain"] == "just text")

        #expect(try ok(["defaults", "read", group, "s"]) == "hello world")
        #expect(try ok(["defaults", "read", group, "i"]) == "-7")
        #expect(try ok(["defaults", "read-type", group, "b"]) == "Type is boolean")
        #expect(try ok(["defaults", "read-type", group, "f"]) == "Type is float")
        #expect(try ok(["defaults", "read", group, "a"]) == "(\n    one,\n    2\n)")
    }

    @Test func addsAreReadModifyWrites() throws {
        _ = try ok(["defaults", "write", group, "list", "-array-add", "a"])
        _ = try ok(["defaults", "write", group, "list", "-array-add", "b", "c"])
        _ = try ok(["defaults", "write", group, "map", "-dict-add", "k1", "v1"])
        _ = try ok(["defaults", "write", group, "map", "-dict-add", "k2", "v2"])
        _ = try ok(["defaults", "write", group, "n", "-int-add", "5"])
        _ = try ok(["defaults", "write", group, "n", "-int-add", "-2"])
        let contents = try onDisk()
        #expect(contents["list"] == ["a", "b", "c"])
        #expect(contents["map"] == ["k1": "v1", "k2": "v2"])
        #expect(contents["n"] == 3)
        let wrongType = try fails(["defaults", "write", group, "n", "-array-add", "x"])
        #expect(wrongType.stderr.contains("key \"n\" holds an integer (3), but this needs an array to append to; nothing was changed"))
        #expect(wrongType.status == 1)
        let notANumber = try fails(["defaults", "write", group, "list", "-int-add", "1"])
        #expect(notANumber.stderr.contains("needs a whole number to add to"))
        #expect(try onDisk()["n"] == 3)
    }

    @Test func wholeDomainWritesImportAndExport() throws {
        _ = try ok(["defaults", "write", group, "old", "gone"])
        _ = try ok(["defaults", "write", group, "{ a = 1; b = (x); }"])
        #expect(try onDisk() == ["a": "1", "b": ["x"]])

        let xml = try ok(["defaults", "export", group, "-"])
        #expect(xml.hasPrefix("<?xml"))
        let other = "group.com.example.other"
        _ = try ok(["defaults", "import", other, "-"], stdin: Data(xml.utf8))
        #expect(try ok(["defaults", "read", other, "a"]) == "1")

        let exported = root.path + "/exported.plist"
        _ = try ok(["defaults", "export", group, exported])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: exported))
        #expect(BinaryPropertyList.isBinary(bytes))
        #expect(try PropertyListSerialization.propertyList(from: bytes, format: nil) is [String: Any])
    }

    @Test func renameDeleteDomainsFind() throws {
        _ = try ok(["defaults", "write", group, "color", "blue"])
        _ = try ok(["defaults", "write", "com.example.app", "launches", "-int", "3"])
        _ = try ok(["defaults", "write", "-g", "AppleLocale", "en_GB"])
        _ = try ok(["defaults", "rename", group, "color", "colour"])
        #expect(try ok(["defaults", "read", group, "colour"]) == "blue")
        #expect(try ok(["defaults", "domains"]) == "com.example.app, \(group)")
        #expect(try ok(["defaults", "read", "NSGlobalDomain", "AppleLocale"]) == "en_GB")
        let found = try ok(["defaults", "find", "BLUE"])
        #expect(found.contains("Found 1 key in domain '\(group)'"))
        _ = try ok(["defaults", "delete", group, "colour"])
        _ = try fails(["defaults", "read", group, "colour"])
        _ = try ok(["defaults", "delete", "com.example.app"])
        #expect(try ok(["defaults", "domains"]) == group)
    }

    @Test func errorsSayWhatAndWhere() throws {
        _ = try ok(["defaults", "write", group, "present", "yes"])
        let missingKey = try fails(["defaults", "read", group, "nope"])
        #expect(missingKey.stderr.contains("(\(group), nope) does not exist"))
        let missingDomain = try fails(["defaults", "read", "com.example.none"])
        #expect(missingDomain.stderr.contains("com.example.none does not exist"))
        let badInt = try fails(["defaults", "write", group, "n", "-int", "five"])
        #expect(badInt.stderr.contains("-int expects an integer, got \"five\""))
        let badPlist = try fails(["defaults", "write", group, "p", "(a, b"])
        #expect(badPlist.stderr.contains("not a valid property list"))
        let badName = try fails(["defaults", "write", "../escape", "k", "v"])
        #expect(badName.stderr.contains("contains '/'") || badName.stderr.contains("contains '..'"))
        let badImport = try fails(["defaults", "import", group, root.path + "/missing.plist"])
        #expect(badImport.stderr.contains("missing.plist"))
        #expect(try onDisk() == ["present": "yes"])
    }

    @Test func aCorruptFileIsReportedThenMovedAsideByAWrite() throws {
        _ = try ok(["defaults", "write", group, "k", "v"])
        let path = root.groupSuitePath(group)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: path))
        let read = try fails(["defaults", "read", group])
        #expect(read.stderr.contains(path))
        #expect(read.stderr.contains("not a valid property-list dictionary"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("garbage".utf8))

        let write = try groupsim(["defaults", "write", group, "k", "new"], root: root)
        #expect(write.status == 0)
        #expect(write.stderr.contains("moved to"))
        #expect(try onDisk() == ["k": "new"])
        let folder = (path as NSString).deletingLastPathComponent
        let aside = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".corrupt-") }
        #expect(aside.count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + aside[0])) == Data("garbage".utf8))
    }

    /// What the tool accepts, every reader reads: the domain's dictionary is
    /// a file's first level, so a value may nest one level less than a file.
    @Test func aValueTooDeepForReadersIsRefusedAndTheFileKept() throws {
        _ = try ok(["defaults", "write", group, "k", "v"])
        let before = try Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath(group)))
        let deep = String(repeating: "(", count: 512) + "x" + String(repeating: ")", count: 512)
        let refused = try fails(["defaults", "write", group, "deep", deep])
        #expect(refused.stderr.contains("more than 511 deep"), "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath(group))) == before)
        let fits = String(repeating: "(", count: 511) + "x" + String(repeating: ")", count: 511)
        _ = try ok(["defaults", "write", group, "deep", fits])
        #expect(try onDisk()["deep"] != nil)
        _ = try ok(["defaults", "write", group, "k", "still readable"])
    }

    /// A device or a FIFO named where a file is expected is refused at once, never read forever.
    @Test func importingFromADeviceOrAFIFOIsRefusedNotAHang() throws {
        for path in ["/dev/zero", root.path + "/fifo"] {
            if path.hasSuffix("fifo") { #expect(mkfifo(path, 0o600) == 0) }
            let result = try groupsimBounded(["defaults", "import", group, path], root: root)
            #expect(result.status != 0)
            #expect(result.stderr.contains("cannot read '\(path)'"), "\(result.stderr)")
        }
    }

    @Test func readingEveryDomainShowsTheReadableOnesAndNamesTheCorruptOne() throws {
        _ = try ok(["defaults", "write", group, "k", "v"])
        _ = try ok(["defaults", "write", "com.example.app", "theme", "dark"])
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: root.groupSuitePath(group)))
        let read = try fails(["defaults", "read"])
        #expect(read.stdout.contains("theme = dark"))
        #expect(read.stderr.contains("domain \(group) could not be read"))
        #expect(read.stderr.contains(root.groupSuitePath(group)))
    }

    @Test func readingAndDeletingCreateNothing() throws {
        _ = try fails(["defaults", "read", "--device", "Ghost", "group.com.example.nope"])
        _ = try fails(["defaults", "read-type", "--device", "Ghost", "group.com.example.nope", "k"])
        _ = try fails(["defaults", "delete", "--device", "Ghost", "group.com.example.nope"])
        _ = try fails(["defaults", "delete", "--device", "Ghost", "com.example.app", "k"])
        _ = try fails(["defaults", "rename", "--device", "Ghost", "com.example.app", "a", "b"])
        // A device that does not exist is refused, never made (a typo of a real one is named).
        #expect(try fails(["defaults", "domains", "--device", "Ghost"]).stderr.contains("no device named Ghost"))
        #expect(
            try fails(["defaults", "write", "--device", "Ghost", "group.com.example.nope", "k", "v"]).stderr.contains("groupsim device create Ghost"))
        _ = try ok(["device", "create", "iPad"])
        #expect(try fails(["defaults", "write", "--device", "Ipda", "group.com.example.nope", "k", "v"]).stderr.contains("did you mean iPad?"))
        #expect(try fails(["container", "--device", "NoSuchDevice", "group.com.example.nope"]).stderr.contains("no device named NoSuchDevice"))
        _ = try ok(["device", "list"])
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices/Ipda"))
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices/NoSuchDevice"))
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices/Ghost"))
    }

    @Test func containerPrintsTheIOSLayout() throws {
        _ = try ok(["defaults", "write", group, "k", "v"])
        #expect(try ok(["container", group]) == "\(root.path)/devices/iPhone/Containers/Shared/AppGroup/\(group)")
        _ = try ok(["device", "create", "iPad"])
        _ = try ok(["app", "install", "--device", "iPad"])
        #expect(
            try ok(["container", "--device", "iPad", "com.example.notes.widget"])
                == "\(root.path)/devices/iPad/Containers/Data/Application/com.example.notes.widget")
        // An app never installed gets no container: the likely one is named.
        #expect(try fails(["container", "--device", "iPad", "com.example.note"]).stderr.contains("did you mean com.example.notes?"))
        #expect(!FileManager.default.fileExists(atPath: root.path + "/devices/iPad/Containers/Data/Application/com.example.note"))
    }

    @Test func everyCommandHasHelp() throws {
        for command in [["defaults"], ["defaults", "read"], ["defaults", "write"], ["defaults", "import"], ["container"]] {
            let result = try groupsim(command + ["--help"], root: root)
            #expect(result.status == 0)
            #expect(result.stdout.contains("USAGE"))
        }
    }
}
