#if canImport(Testing)
    import Testing

    extension Failure {
        /// Records this failure as a Swift Testing issue at its place (the
        /// test's line, or the scenario step's).
        public func record() {
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        }

        /// `place` as Swift Testing's `SourceLocation`.
        public var sourceLocation: SourceLocation {
            SourceLocation(fileID: place.fileID, filePath: place.filePath, line: place.line, column: place.column)
        }
    }

    /// Swift Testing: runs `body` with a fresh simulation and finishes it. A
    /// `Failure` thrown by a simulation call is recorded as an issue at the
    /// line of that call (and not thrown on); any other error is thrown on.
    /// The root is kept, and its path printed, when the body failed: a
    /// `Failure`, another error, or any issue recorded while it ran (an
    /// `#expect` that did not hold).
    ///
    /// ```swift
    /// @Test func theWidgetSeesTheAppsTheme() async throws {
    ///     try await withSimulation { simulation in
    ///         try simulation.install(.example)
    ///         let widget = try await simulation.launch("NotesWidget", as: .widget)
    ///         …
    ///     }
    /// }
    /// ```
    /// - Parameters:
    ///   - binaries: The folder of the built executables (nil: as for `Simulation`).
    ///   - body: The test's work with the simulation.
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    /// - Throws: Any error `body` throws other than `Failure`, or a `Failure` making the simulation.
    public func withSimulation(
        binaries: String? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column,
        _ body: @Sendable (Simulation) async throws -> Void
    ) async throws {
        let simulation = try Simulation(binaries: binaries, fileID: fileID, filePath: filePath, line: line, column: column)
        defer { simulation.finish() }
        do {
            if let test = Test.current {
                // Any error recorded inside the body (an #expect, say; a known one too) marks the simulation failed, so its root is kept.
                let watcher: IssueHandlingTrait = .compactMapIssues { issue in
                    if issue.severity >= .error { simulation.markFailed() }
                    return issue
                }
                try await watcher.provideScope(for: test, testCase: Test.Case.current) { try await body(simulation) }
            } else {
                try await body(simulation)
            }
        } catch let failure as Failure {
            simulation.markFailed()
            failure.record()
        } catch {
            simulation.markFailed()
            throw error
        }
    }

    /// Swift Testing: runs the scenario file at `path` (see
    /// `Simulation.runScenario`); a failing step is recorded as an issue at its
    /// line in the scenario file.
    /// - Parameters:
    ///   - path: The scenario file.
    ///   - binaries: The folder of groupsim's executables (nil: as for `Simulation`).
    ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
    ///   - filePath: The caller's `#filePath` (the default).
    ///   - line: The caller's `#line` (the default).
    ///   - column: The caller's `#column` (the default).
    public func expectScenarioPasses(
        _ path: String, binaries: String? = nil,
        fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
    ) async {
        do {
            try await Simulation.runScenario(path, binaries: binaries, fileID: fileID, filePath: filePath, line: line, column: column)
        } catch let failure as Failure {
            failure.record()
        } catch {
            Issue.record(error, sourceLocation: SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column))
        }
    }
#endif
