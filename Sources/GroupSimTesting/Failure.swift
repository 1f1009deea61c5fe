import Foundation

/// Where in a test a call was made: the `#fileID`, `#filePath`, `#line` and
/// `#column` of the caller, so a failure is reported on the test's own line
/// by Swift Testing (`SourceLocation`) and XCTest (file and line) alike.
public struct SourcePlace: Sendable, Equatable, CustomStringConvertible {
    public let fileID: String
    public let filePath: String
    public let line: Int
    public let column: Int

    /// A place in a Swift file, as the caller's `#fileID`, `#filePath`, `#line` and `#column` give it.
    /// - Parameters:
    ///   - fileID: The file as `#fileID` gives it (module/file).
    ///   - filePath: The file's path.
    ///   - line: The line.
    ///   - column: The column.
    public init(fileID: String, filePath: String, line: Int, column: Int) {
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }

    /// A place in a file that is not Swift (a scenario file): its folder's
    /// name stands for the module in `fileID`.
    /// - Parameters:
    ///   - path: The file's path.
    ///   - line: Its line (at least 1).
    ///   - column: Its column (at least 1).
    public init(file path: String, line: Int, column: Int = 1) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().lastPathComponent
        self.init(fileID: (folder.isEmpty ? "" : folder + "/") + url.lastPathComponent, filePath: path, line: max(line, 1), column: max(column, 1))
    }

    public var description: String { "\(filePath):\(line)" }
}

/// Why a simulation call failed: what was expected, what was found, and
/// where the test made the call (or, for a scenario file, the failing
/// step's line). Every method of the library throws this and nothing else
/// for what goes wrong in the simulation; the adapters record it as a test
/// failure at `place` (`Failure.record()` in Swift Testing,
/// `XCTestCase.record(_:)` in XCTest, or `withSimulation`, which does it for you).
public struct Failure: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let place: SourcePlace

    /// A failure with what went wrong and where.
    /// - Parameters:
    ///   - message: What was expected and what was found.
    ///   - place: Where the test made the call.
    public init(_ message: String, at place: SourcePlace) {
        self.message = message
        self.place = place
    }

    public var description: String { "\(place): \(message)" }
}
