import Foundation
import SimulationValues

#if canImport(Glibc)
    import Glibc
#endif

/// A child must not outlive the process that started it, however that one
/// ends (`kill -9` included, which no handler of the owner can see): a run's
/// cloud and agents, the apps it drives, a benchmark's observers.
///
/// The owner names itself in `GROUPSIM_OWNER_PID` when it starts the child
/// (`RunningProcess` does, for every child), and the child, first thing in
/// its `main`, calls `adopt()`: the kernel is asked to send it SIGKILL when
/// its parent ends (`PR_SET_PDEATHSIG`). SIGKILL, because it also ends a
/// child that is stopped (a scenario's suspended app) and needs no thread of
/// the child to act. The request is made in the child after `exec` (Foundation
/// starts children with `posix_spawn`, with no hook between fork and exec),
/// so an owner that died before it is found by `getppid()`.
///
/// The kernel's "parent" here is the thread that started the child, not the
/// process: a child started from a thread that ends (a dispatch worker, a
/// scenario's thread) would be killed with that thread. So every child is
/// started from `SpawningThread`, which lives as long as the process.
///
/// Only the child itself is tied: the kernel clears the request in a process
/// it forks. A user's program's own children are ended with its process
/// group instead (`RunningProcess`'s `ownGroup`), and, once the owner was
/// killed, by the owner's `Warden`.
///
/// A daemon meant to outlive its starter (`groupsim cloud start`) is started
/// by `DetachedProcess`, which never passes the variable on, nor does `Warden`.
package enum OwnerLifetime {
    package static let variable = SimulationEnvironment.Name.ownerPID

    /// Child side: called first by every executable of the package. Without
    /// the variable it does nothing. The variable is removed from the
    /// environment, so this process's own children are tied to it only if it
    /// names itself again.
    package static func adopt() {
        guard let text = SimulationEnvironment.current[variable] else { return }
        unsetenv(variable)
        guard let owner = pid_t(text), owner > 1 else {
            FileHandle.standardError.write(Data("warning: \(variable)='\(text)' is not a process id; this process is not tied to its starter\n".utf8))
            return
        }
        guard setParentDeathSignal(SIGKILL) else {
            FileHandle.standardError.write(
                Data("warning: cannot ask to end with process \(owner) (prctl PR_SET_PDEATHSIG: \(String(cString: strerror(errno))))\n".utf8))
            return
        }
        if getppid() == owner { return }
        // Started by someone else (a program between the owner and this
        // process passed the variable on): the owner is not our parent.
        guard kill(owner, 0) == -1 && errno == ESRCH else {
            _ = setParentDeathSignal(0)
            return
        }
        // The owner ended before the request was made: end as it would have made us.
        kill(getpid(), SIGKILL)
    }

    /// `prctl(PR_SET_PDEATHSIG, signal)`. prctl is variadic in C, which Swift
    /// cannot call, so it is called through a fixed prototype of its five words.
    private static func setParentDeathSignal(_ signal: Int32) -> Bool {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let symbol = dlsym(nil, "prctl") else { return false }
        let setPdeathsig: Int32 = 1  // PR_SET_PDEATHSIG, <linux/prctl.h>
        return unsafeBitCast(symbol, to: Prctl.self)(setPdeathsig, UInt(signal), 0, 0, 0) == 0
    }
}
