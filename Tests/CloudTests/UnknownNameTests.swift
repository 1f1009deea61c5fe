import CloudDevice
import CloudModel
import Foundation
import PropertyList
import TestSupport
import Testing

@testable import CloudService

/// Names of stores and accounts that nothing was uploaded to (made up by a
/// peer, or not used yet) cost the cloud nothing lasting: no folder, no lock
/// file, nothing kept in memory once the look-up is over. Before, every name
/// looked up kept a lock file, a folder and a cached store until the cloud
/// restarted (30 s of polls left 250,202 lock files and 378 MB).
@Suite struct UnknownNameTests {
    let root = TemporaryRoot()
    var folder: String { root.path + "/cloud/data" }

    /// Everything under the data folder's accounts.
    func filesOnDisk() -> [String] {
        (try? FileManager.default.subpathsOfDirectory(atPath: folder + "/accounts")) ?? []
    }

    @Test func lookingUpStoresThatDoNotExistLeavesNothing() throws {
        var ledger = CloudLedger(dataFolder: folder, top: root.path)
        for index in 0..<3_000 {
            let state = try ledger.store("com.example.made-up.\(index)", of: "ghost\(index % 3)")
            #expect(state.revision == 0 && state.records.isEmpty)
        }
        #expect(filesOnDisk().isEmpty, "\(filesOnDisk().prefix(5))")
        #expect(ledger.cachedEntries == 0)
        #expect(!ledger.holdsStores)
        // A store that was written is kept, and read back as written.
        _ = try ledger.upload([CloudLedgerTests.change("k", 1, time: 10)], to: "s", of: "alice", from: "iPhone")
        #expect(ledger.holdsStores)
        #expect(try ledger.store("s", of: "alice").values == ["k": 1])
        #expect(filesOnDisk().filter { !$0.contains("/.") && $0.hasSuffix(".plist") } == ["alice/s.plist"], "\(filesOnDisk())")
    }

    /// A session with a made-up account, its hello and polls naming made-up
    /// stores: once it ends, the cloud keeps no book of the account and no
    /// file. An account that holds a store keeps its book.
    @Test func sessionsOfMadeUpAccountsLeaveNoBookAndNoFile() async throws {
        let server = try CloudServer(dataFolder: folder, top: root.path)
        let (frames, continuation) = AsyncStream.makeStream(of: OutgoingFrame.self)
        let outbox = DeviceOutbox(continuation, limit: 64 << 20) { _ in }
        for index in 0..<200 {
            let id = try await server.open(device: "iPhone", account: "ghost\(index)", outbox: outbox)
            try await server.greet(id, stores: ["com.example.hello.\(index)": 0])
            let polled = Dictionary(uniqueKeysWithValues: (0..<25).map { ("com.example.poll.\(index).\($0)", Int64(1)) })
            try await server.receive(.poll(stores: polled), session: id)
            try await server.receive(.subscribe(store: "com.example.subscribe.\(index)", since: 0), session: id)
            // Every other session is replaced by the next one of the same device, as a reconnecting agent's is.
            if index % 2 == 0 { await server.close(id) }
        }
        // The last session is still open: its book is in use.
        #expect(await server.bookCount == 1)
        let last = try await server.open(device: "iPad", account: "alice", outbox: outbox)
        try await server.receive(.upload(store: "s", changes: [CloudLedgerTests.change("k", 1, time: 10, device: "iPad")]), session: last)
        await server.close(last)
        let ghost = try await server.open(device: "iPhone", account: "ghost-last", outbox: outbox)
        await server.close(ghost)
        #expect(await server.bookCount == 1)
        #expect(filesOnDisk().filter { !$0.contains("/.") && $0.hasSuffix(".plist") } == ["alice/s.plist"], "\(filesOnDisk().prefix(5))")
        #expect(filesOnDisk().allSatisfy { $0.hasPrefix("alice") }, "\(filesOnDisk().prefix(5))")
        // The status names the account that holds a store, not the made-up ones.
        let accounts = await server.status().dictionaryValue?["accounts"]
        #expect(accounts == ["alice"], "\(String(describing: accounts))")
        await #expect(throws: CloudServiceError.noAccount(name: "ghost0")) { try await server.account("ghost0") }
        continuation.finish()
        for await _ in frames {}
    }
}
