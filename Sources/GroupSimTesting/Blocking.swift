import Foundation

/// Runs blocking work (a wait on a condition, a child's start, a file
/// operation) on a thread of its own, so that an `async` caller never holds
/// one of the cooperative pool's few threads for the length of a wait:
/// tests run in parallel, and a pool blocked by waits would stall them all.
enum Blocking {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.name = "groupsim.testing.wait"
            thread.start()
        }
    }
}

extension Duration {
    /// In seconds, for the waits of `ChildProcess` (never negative).
    var seconds: Double {
        let (whole, fraction) = components
        return max(0, Double(whole) + Double(fraction) / 1e18)
    }
}
