import Foundation

/// Where an Apple framework raises an Objective-C exception that no app
/// catches, the process ends: this ends a simulated process the same way,
/// with the line the system logs and SIGABRT (status 134 in a shell), so a
/// scenario or a test sees the crash the device would show.
package enum UncaughtException {
    package static func terminate(name: String, reason: String) -> Never {
        end(saying: "*** Terminating app due to uncaught exception '\(name)', reason: '\(reason)'")
    }

    /// Ends the process as the system ends an app it terminates: `line` on stderr, then SIGABRT.
    package static func end(saying line: String) -> Never {
        // No fflush: as on Apple platforms, what stdio still buffers is lost (and
        // another thread may hold a stream's lock, reading stdin, for ever).
        FileHandle.standardError.write(Data((line + "\n").utf8))
        // Swift's runtime catches SIGABRT to print a backtrace, which can take
        // many seconds; the app's end is what is simulated, not a debugger's view.
        signal(SIGABRT, SIG_DFL)
        abort()
    }
}
