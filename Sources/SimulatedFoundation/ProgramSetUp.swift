import Foundation
import Guarded

/// When a program has set itself up, so a driver's first write cannot race
/// its setup (the observers it registers, the defaults it registers): its
/// control channel says `ready` only then, and `launch` (scenarios,
/// GroupSimTesting) waits for `ready`. A program is set up at the first of:
/// - `GroupSim.ready()`, said where the setup ends;
/// - its first `readLine()` (an interactive program waits for its first command);
/// - its exit (a one-shot that did its work), or its end by an uncaught exception (a key the iCloud store refuses);
/// - `fallbackSeconds` after it loaded, with a warning saying what to call.
package enum ProgramSetUp {
    /// How long a program that says nothing is waited for before `ready` goes anyway.
    package static let fallbackSeconds: Double = 5

    /// Whether the program is set up.
    private static let done = LockedCondition(false)

    /// The program is set up (the first call counts; later ones do nothing).
    package static func markDone() {
        done.withLock { $0 = true }
    }

    /// Waits until the program is set up; false if `deadline` came first.
    static func waitUntilDone(before deadline: Date) -> Bool {
        done.wait(atMost: deadline.timeIntervalSinceNow) { $0 }
    }
}

extension GroupSim {
    /// Tells the driver that the program has set itself up: its control
    /// channel says `ready` now, so `launch` returns and the driver's first
    /// write reaches the observers the program registered. Call it where
    /// the setup ends, in a program that neither reads standard input with
    /// `readLine()` nor ends at once (docs/protocol.md, "When a program is ready").
    public static func ready() { ProgramSetUp.markDone() }
}

/// Swift's `readLine(strippingNewline:)`, which an interactive program calls
/// once its setup is done and it waits for its first command: the first call
/// tells the driver the program is ready. (Declared here, it is the one an
/// unqualified `readLine()` of a file that imports SimulatedFoundation calls.)
/// - Parameter strippingNewline: Whether to drop the line's newline, as the standard library's.
/// - Returns: The line, or nil at the end of input.
public func readLine(strippingNewline: Bool = true) -> String? {
    ProgramSetUp.markDone()
    return Swift.readLine(strippingNewline: strippingNewline)
}
