extension ChangeWatcher {
    /// What the watcher has done since the process started, for tests and diagnostics.
    package struct Statistics: Sendable, Equatable {
        package var events = 0
        package var overflows = 0
        package var reloadsScheduled = 0
        package var watchedDirectories = 0
        /// Fresh inotify instances started after a watched folder was deleted.
        package var restarts = 0
    }
}
