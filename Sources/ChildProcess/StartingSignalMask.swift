import Foundation
import SimulationValues

/// A child of `RunningProcess` starts with every signal blocked (see
/// `SpawningThread`), which suits the package's executables and no one
/// else: a user's program, run as an app, must be ended by SIGTERM and
/// interrupted by SIGINT as any program is. Its starter sets this variable;
/// the program, as it loads (SimulatedFoundation does it), unblocks every
/// signal, as `groupsim exec` does before it becomes the program.
package enum StartingSignalMask {
    package static let unblockVariable = SimulationEnvironment.Name.unblockSignals

    /// Child side: with the variable set (to "1"), removes it and unblocks
    /// every signal of the calling thread (at load, the only one).
    package static func unblockIfAsked() {
        guard let value = SimulationEnvironment.current[unblockVariable] else { return }
        let asked = value == "1"
        unsetenv(unblockVariable)
        guard asked else { return }
        var nothingBlocked = sigset_t()
        sigemptyset(&nothingBlocked)
        pthread_sigmask(SIG_SETMASK, &nothingBlocked, nil)
    }
}
