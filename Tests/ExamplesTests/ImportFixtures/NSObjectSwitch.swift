// The second line of a module-wide switch, for a module with key-value
// observers in files that import Foundation.
import SimulatedFoundation

typealias NSObject = SimulatedFoundation.NSObject
