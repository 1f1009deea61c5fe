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
}
