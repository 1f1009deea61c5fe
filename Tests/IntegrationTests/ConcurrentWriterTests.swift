import Foundation
import PropertyList
import TestSupport
import Testing

/// Several real processes writing one suite at once.
@Suite(.serialized) struct ConcurrentWriterTests {
    let group = "group.com.example.shared"

    func contents(_ root: TemporaryRoot) throws -> [String: PlistValue] {
        try PropertyListFormat.decodeDictionary(Data(contentsOf: URL(fileURLWithPath: root.groupSuitePath(group))))
    }

    @Test(arguments: 1...3) func distinctKeysFromThreeProcessesAreAllKept(run: Int) throws {
        let root = TemporaryRoot()
        let results = try runConcurrently(
            (0..<3).map { writer in
                ["write-keys", "--domain", group, "--prefix", "w\(writer)", "--count", "1000"]
            }, executable: "groupsim-stress", root: root)
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        let contents = try contents(root)
        #expect(contents.count == 3000)
        for writer in 0..<3 {
            for index in 0..<1000 { #expect(contents["w\(writer)-\(index)"] == .integer(Int64(index))) }
        }
    }

    @Test func atomicAddsFromThreeProcessesLoseNothing() throws {
        let root = TemporaryRoot()
        let results = try runConcurrently(
            (0..<3).map { _ in
                ["int-add", "--domain", group, "--key", "counter", "--count", "1000"]
            }, executable: "groupsim-stress", root: root)
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        #expect(try contents(root)["counter"] == 3000)
    }

    @Test func arrayAppendsFromThreeProcessesLoseNothing() throws {
        let root = TemporaryRoot()
        let results = try runConcurrently(
            (0..<3).map { writer in
                ["array-add", "--domain", group, "--key", "items", "--prefix", "w\(writer)", "--count", "300"]
            }, executable: "groupsim-stress", root: root)
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        let items = try #require(contents(root)["items"]?.arrayValue)
        #expect(items.count == 900)
        #expect(Set(items).count == 900)
        for writer in 0..<3 {
            // Each writer's items appear in its own order.
            let mine = items.compactMap(\.stringValue).filter { $0.hasPrefix("w\(writer)-") }
            #expect(mine == (0..<300).map { "w\(writer)-\($0)" })
        }
    }

    @Test func atomicAddsThroughTheDefaultsToolLoseNothing() throws {
        let root = TemporaryRoot()
        let commands = (0..<60).map { _ in ["defaults", "write", group, "visits", "-int-add", "1"] }
        // 60 separate tool invocations, three at a time.
        for batch in stride(from: 0, to: commands.count, by: 3) {
            for result in try runConcurrently(Array(commands[batch..<batch + 3]), root: root) { #expect(result.status == 0) }
        }
        #expect(try contents(root)["visits"] == 60)
    }
}
