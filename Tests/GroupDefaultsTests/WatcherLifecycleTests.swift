import Foundation
import TestSupport
import Testing

@testable import GroupDefaults

@Suite struct WatcherLifecycleTests {
    @Test func openingAndClosingSuitesLeaksNoWatchesAndNoThreads() throws {
        let f = Fixture()
        for index in 0..<100 {
            let suite = try GroupDefaults(suiteName: "group.com.example.s\(index)", context: f.context(groups: nil), processDomains: f.process)
            suite.set(.integer(Int64(index)), forKey: "k")
            try suite.flush()
        }
        // Every instance above is released: their domains and watches must go.
        // A domain whose reload is running right now goes when that reload
        // ends, so settle on the watcher's answer (each round is a round trip
        // through its thread), within a deadline.
        let deadline = Date().addingTimeInterval(10)
        while ChangeWatcher.shared.waitUntilIdle(), ChangeWatcher.shared.watchedDirectories(under: f.root.path) > 0, Date() < deadline {}
        #expect(ChangeWatcher.shared.watchedDirectories(under: f.root.path) == 0)
        let watcherThreads = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix("groupsim-watch") == true
        }
        #expect(watcherThreads.count == 1)
    }

    @Test func anOpenSuiteIsWatchedOnce() throws {
        let f = Fixture()
        let a = try f.suite()
        let b = try f.suite("com.example.app.widget")
        #expect(a.path == b.path)
        // One domain object for the file, shared as apps share cfprefsd's cache.
        #expect(a.own === b.own)
        #expect(ChangeWatcher.shared.waitUntilIdle())
        // The suite's folder, the global domain's folder and, for the managed preferences (none yet), the
        // device's Library, where their folder will appear; one interest in each file (the suite's managed file is
        // both instances': managed preferences are per domain).
        #expect(ChangeWatcher.shared.watchedDirectories(under: f.root.path) == 3)
        #expect(ChangeWatcher.shared.watchedFiles(under: f.root.path) == 3)
    }
}
