import Foundation
import PropertyList
import SharedFiles
import TestSupport
import Testing

@testable import GroupDefaults

/// On a device that reads through cfprefsd's cache (macOS), a file edited
/// beside the store is never read into a process's view, even when the edit
/// lands while the process is reloading the file.
@Suite struct PreferencesCacheTests {
    let fixture = Fixture()

    /// Writes `contents` over the start of the file in one call, without the
    /// store: the file grows, so its size no longer matches the store's mark.
    private func editInPlace(_ path: String, _ contents: [String: PlistValue]) throws {
        let bytes = Array(PropertyListFormat.binary.encode(.dictionary(contents)))
        let descriptor = open(path, O_WRONLY)
        try #require(descriptor >= 0, "cannot open \(path) to edit it: errno \(errno)")
        defer { close(descriptor) }
        try #require(write(descriptor, bytes, bytes.count) == bytes.count, "the edit of \(path) was not written whole")
    }

    @Test func anEditLandingDuringAReloadIsNeverTakenIntoTheView() throws {
        let f = fixture
        // A Mac whose apps read through the cache.
        try f.root.makeDevice(DeviceSettings(platform: .macOS, preferencesCache: true))
        let suite = try f.suite()
        let path = suite.own.file.path
        let longer = String(repeating: "x", count: 64)
        // Each round commits, then edits the file while the process reloads it again and again: an edit
        // between the reload's look at the file and its read is the race this guards against.
        for round in 0..<60 {
            let mine = PlistValue.string("mine \(round)")
            suite.set(mine, forKey: "k")
            try suite.flush()
            let edited = DispatchSemaphore(value: 0)
            let editError = UnsafeSendableBox<(any Error)?>(nil)
            Thread.detachNewThread {
                do { try editInPlace(path, ["k": .string(longer)]) } catch { editError.update { $0 = error } }
                edited.signal()
            }
            while edited.wait(timeout: .now()) == .timedOut { suite.own.reloadFromDisk() }
            suite.own.reloadFromDisk()
            if let error = editError.value { throw error }
            try #require(suite.value(forKey: "k") == mine, "round \(round): the edit was read into the view")
        }
        // The next commit writes the process's view over the edit, as cfprefsd does.
        suite.set(.string("last"), forKey: "other")
        try suite.flush()
        #expect(try SharedPlistFile.read(path: path, root: f.root.path)?["k"] == .string("mine 59"))
    }

    @Test func aReaderThroughTheCacheTellsTheStoresFileFromAnEditedOne() throws {
        let f = fixture
        let suite = try f.suite()
        let file = suite.own.file
        #expect(try file.readUnlessForeign() == [:], "no file: nothing was edited")
        suite.set(.string("mine"), forKey: "k")
        try suite.flush()
        #expect(try file.readUnlessForeign() == ["k": .string("mine")])
        try editInPlace(file.path, ["k": .string(String(repeating: "x", count: 64))])
        #expect(try file.readUnlessForeign() == nil)
        #expect(try file.read() == ["k": .string(String(repeating: "x", count: 64))], "a reader without the cache reads it")
    }

    /// A writer that did not make the process's view (`groupsim defaults write`, through cfprefsd on a Mac)
    /// starts from the store's last commit, not from a file edited beside it; an edit made after a commit
    /// the copy does not know of, or a file written anew after a delete, is taken as it is.
    @Test func aWriterThroughTheCacheStartsFromTheStoresLastCommit() throws {
        let path = fixture.root.path + "/Library/Preferences/group.com.example.shared.plist"
        func cached() throws -> SharedPlistFile { try SharedPlistFile(path: path, root: fixture.root.path, keepsStoreCopy: true) }
        let long = String(repeating: "x", count: 64)
        try cached().update { $0["theme"] = "light" }
        try editInPlace(path, ["theme": .string(long)])
        try cached().update { $0["fontSize"] = 14 }
        #expect(try cached().read() == ["theme": "light", "fontSize": 14], "the hand edit came back")

        // A file replaced by another tool (no mark at all) gives way to the copy too.
        try Data(PropertyListFormat.binary.encode(.dictionary(["theme": "dark"]))).write(to: URL(fileURLWithPath: path), options: .atomic)
        try cached().update { $0["fontSize"] = 15 }
        #expect(try cached().read() == ["theme": "light", "fontSize": 15])

        // A commit made without the cache (the device's setting was off) keeps no copy: the copy is older than
        // the file's mark, so an edit after it is taken as it is rather than lose that commit.
        try SharedPlistFile(path: path, root: fixture.root.path).update { $0["theme"] = "sepia" }
        try editInPlace(path, ["theme": .string(long), "fontSize": 15])
        try cached().update { $0["fontSize"] = 16 }
        #expect(try cached().read() == ["theme": .string(long), "fontSize": 16])

        // Deleted through the store: cfprefsd holds nothing of it, and a file made by hand afterwards is read as it is.
        #expect(try cached().remove())
        try Data(PropertyListFormat.binary.encode(.dictionary(["theme": "hand-made"]))).write(to: URL(fileURLWithPath: path))
        try cached().update { $0["fontSize"] = 17 }
        #expect(try cached().read() == ["theme": "hand-made", "fontSize": 17])
    }
}
