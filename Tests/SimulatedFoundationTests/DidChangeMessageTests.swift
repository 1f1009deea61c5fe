import Foundation
import SimulatedFoundation
import Testing

/// `UserDefaults.DidChangeMessage` as Apple's code observes it: posted with
/// `didChangeNotification` for a change this process makes, to an observer of
/// the instance or of every instance, once the process observes it at all.
@Suite struct DidChangeMessageTests {
    let fixture = FaceFixture()

    /// Waits until `count` messages have come through `stream` (at most 120 s: the messages' observers run on the
    /// cooperative pool, which a loaded test run can hold up for many seconds); how many came.
    private func received(_ stream: AsyncStream<Void>, count: Int) async -> Int {
        await withTaskGroup(of: Int?.self) { group in
            group.addTask {
                var seen = 0
                for await _ in stream {
                    seen += 1
                    if seen == count { break }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(120))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? 0
        }
    }

    @Test(.timeLimit(.minutes(3))) func anObserverOfTheInstanceGetsAMessageForEachChange() async throws {
        let defaults = try #require(GroupSim.defaults(suiteName: fixture.group, of: fixture.process()))
        let other = try #require(GroupSim.defaults(suiteName: fixture.group, of: fixture.process()))
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let token = NotificationCenter.default.addObserver(of: defaults, for: .didChange) { _ in continuation.yield() }
        defer { NotificationCenter.default.removeObserver(token) }
        defaults.set("dark", forKey: "theme")
        defaults.removeObject(forKey: "theme")
        #expect(await received(stream, count: 2) == 2)
        // Another instance's change is that instance's message, not this one's.
        let (otherStream, otherContinuation) = AsyncStream<Void>.makeStream()
        let otherToken = NotificationCenter.default.addObserver(of: other, for: .didChange) { _ in otherContinuation.yield() }
        defer { NotificationCenter.default.removeObserver(otherToken) }
        other.set(3, forKey: "count")
        #expect(await received(otherStream, count: 1) == 1)
        defaults.set("light", forKey: "theme")
        #expect(await received(stream, count: 1) == 1, "the instance's own next change, and only it, reaches its observer")
    }

    @Test(.timeLimit(.minutes(3))) func anObserverOfEveryInstanceGetsTheirMessages() async throws {
        let defaults = try #require(GroupSim.defaults(suiteName: fixture.group, of: fixture.process()))
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let token = NotificationCenter.default.addObserver(of: UserDefaults.self, for: .didChange) { _ in continuation.yield() }
        defer { NotificationCenter.default.removeObserver(token) }
        defaults.set(true, forKey: "onboarded")
        #expect(await received(stream, count: 1) >= 1)
    }
}
