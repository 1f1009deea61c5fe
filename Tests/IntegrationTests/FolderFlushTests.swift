import Foundation
import TestSupport
import Testing

@testable import GroupDefaults

/// Where strace is, if installed (`scripts/setup.sh` installs it for the tests).
enum Strace {
    static let path = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why the tests cannot trace here, or nil: not installed, or not
    /// allowed to trace (a container without ptrace).
    static let unavailable: String? = {
        guard let path else { return "strace is not installed (scripts/setup.sh installs it with GROUPSIM_NEED_STRACE=1)" }
        guard let probe = try? runProcess(path, ["-qq", "-o", "/dev/null", "/bin/true"]), probe.status == 0 else {
            let reason = (try? runProcess(path, ["-qq", "-o", "/dev/null", "/bin/true"]).stderr) ?? ""
            return "strace cannot trace a process here: \(reason.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
        return nil
    }()
}

/// What a durable commit flushes, seen in the system calls of a real
/// `groupsim defaults write` (a power loss cannot be caused in a test; a
/// folder that was never flushed by name can lose the file and its journal).
@Suite(.enabled(if: Strace.unavailable == nil, Comment(rawValue: Strace.unavailable ?? "")))
struct FolderFlushTests {
    let root = TemporaryRoot()
    let group = "group.com.example.flush"

    /// The paths one `groupsim defaults write` fsync'd or fdatasync'd, as the kernel names them.
    func flushedPaths(_ value: String) throws -> [String] {
        let log = (NSTemporaryDirectory() as NSString).appendingPathComponent("groupsim-strace-\(UUID().uuidString).log")
        defer { unlink(log) }
        let result = try runProcess(
            Strace.path!,
            ["-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o", log, BuiltExecutable.path("groupsim"), "defaults", "write", group, "k", value],
            environment: ["GROUPSIM_ROOT": root.path, "GROUPSIM_DEVICE": "iPhone"])
        #expect(result.status == 0, "\(result.stderr)")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "sync("), let open = line[start.upperBound...].firstIndex(of: "<"),
                let close = line[open...].firstIndex(of: ">")
            else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    @Test func theFirstRecordOfEachJournalSlotFlushesEveryFolderUpToTheRoot() throws {
        let realRoot = URL(fileURLWithPath: root.path).resolvingSymlinksInPath().path
        let preferences = URL(fileURLWithPath: root.groupSuitePath(group)).resolvingSymlinksInPath().deletingLastPathComponent().path
        var chain: [String] = []
        var folder = preferences
        while folder.count > realRoot.count {
            chain.append(folder)
            folder = (folder as NSString).deletingLastPathComponent
        }
        chain.append(realRoot)
        #expect(chain.count == 9, "\(chain)")

        // Two slots, each made by the first record written to it.
        for value in ["a", "b"] {
            let flushed = Set(try flushedPaths(value))
            let missing = chain.filter { !flushed.contains($0) }
            #expect(missing.isEmpty, "not flushed by the record into a new slot (\(value)): \(missing)")
        }
        // Then every commit flushes its record alone: no folder.
        let later = try flushedPaths("c")
        #expect(!later.isEmpty, "a durable commit flushes its journal record")
        #expect(later.filter(isFolder).isEmpty, "\(later)")
    }

    @Test func aProcessRootFlushesNothing() throws {
        try root.setDurability(.process)
        #expect(try flushedPaths("a").isEmpty)
        #expect(try flushedPaths("b").isEmpty)
    }
}
