#if canImport(XCTest)
    import XCTest

    extension XCTestCase {
        /// Records `failure` as a failure of this test at its place (the
        /// test's line, or the scenario step's).
        /// - Parameters:
        ///   - failure: The failure.
        public func record(_ failure: Failure) {
            recordFailure(withDescription: failure.message, inFile: failure.place.filePath, atLine: failure.place.line, expected: true)
        }

        /// A fresh simulation, finished when the test ends (in a teardown
        /// block): its root is removed, or kept with its path printed when the
        /// test failed (any failure this test recorded, the simulation's own included).
        /// - Parameters:
        ///   - binaries: The folder of the built executables (nil: as for `Simulation`).
        ///   - fileID: The caller's `#fileID` (the default): where a failure is reported.
        ///   - filePath: The caller's `#filePath` (the default).
        ///   - line: The caller's `#line` (the default).
        ///   - column: The caller's `#column` (the default).
        /// - Throws: `Failure`, at the caller's line, when the root cannot be made.
        /// - Returns: The simulation; call `finish()` on it in `tearDown`.
        public func makeSimulation(
            binaries: String? = nil,
            fileID: String = #fileID, filePath: String = #filePath, line: Int = #line, column: Int = #column
        ) throws -> Simulation {
            let simulation = try Simulation(binaries: binaries, fileID: fileID, filePath: filePath, line: line, column: column)
            addTeardownBlock { [weak self] in
                if let run = self?.testRun, run.failureCount + run.unexpectedExceptionCount > 0 { simulation.markFailed() }
                simulation.finish()
            }
            return simulation
        }

        /// Runs `body` with a fresh simulation and finishes it: a `Failure` thrown
        /// by a simulation call is recorded at the line of that call (and not
        /// thrown on); any other error is thrown on. The root is kept when the
        /// test failed.
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
            _ body: (Simulation) async throws -> Void
        ) async throws {
            let simulation = try Simulation(binaries: binaries, fileID: fileID, filePath: filePath, line: line, column: column)
            defer {
                if let run = testRun, run.failureCount + run.unexpectedExceptionCount > 0 { simulation.markFailed() }
                simulation.finish()
            }
            do {
                try await body(simulation)
            } catch let failure as Failure {
                simulation.markFailed()
                record(failure)
            } catch {
                // Not recorded yet when the root's fate is decided: keep it.
                simulation.markFailed()
                throw error
            }
        }

        /// Runs the scenario file at `path` (see `Simulation.runScenario`); a
        /// failing step is recorded as a failure at its line in the scenario file.
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
                record(failure)
            } catch {
                recordFailure(withDescription: "\(error)", inFile: filePath, atLine: line, expected: false)
            }
        }
    }
#endif
