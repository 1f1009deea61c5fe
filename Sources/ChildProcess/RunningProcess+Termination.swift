/// What a starter of a child is told: how it ended, its lines and end as they come, and a wait that ran out.
extension RunningProcess {
    /// How a child ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// `exit(status)` or a return from `main`.
        case exited(Int32)
        /// Ended by a signal it did not handle.
        case signalled(Int32)

        /// As a shell shows it: the exit status, or 128 + the signal (137 for KILL).
        package var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// What a starter is told as the child speaks and ends, on the reader threads.
    /// They are let go once `ended` has been called.
    package struct Handlers: Sendable {
        package var stdout: @Sendable (String) -> Void
        package var stderr: @Sendable (String) -> Void
        /// After the last line of both streams, and the child's end (nil: the
        /// end was not seen, which Foundation cannot fail to report).
        package var ended: @Sendable (Termination?) -> Void

        package init(
            stdout: @escaping @Sendable (String) -> Void = { _ in }, stderr: @escaping @Sendable (String) -> Void = { _ in },
            ended: @escaping @Sendable (Termination?) -> Void = { _ in }
        ) {
            self.stdout = stdout
            self.stderr = stderr
            self.ended = ended
        }
    }
}
