// A test file: XCTest re-exports Foundation, so this is "both imports" too.
import SimulatedFoundation
import XCTest

func testFileDefaults() -> UserDefaults { .standard }
