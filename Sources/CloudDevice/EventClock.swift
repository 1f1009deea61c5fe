import Foundation
import SimulationValues

/// Clock readings on the cloud's and the agents' event lines, for the cloud
/// benchmark's "where the time goes". Off unless `GROUPSIM_EVENT_CLOCK=1` is
/// in the environment; then every event line carries `clock` (CLOCK_MONOTONIC
/// nanoseconds, which the processes of one host share), and the moments only
/// timing needs are said as events too: an agent's `woke` and
/// `push-received`, the cloud's `upload-received`.
package enum EventClock {
    package static let variable = SimulationEnvironment.Name.eventClock
    package static let isOn = SimulationEnvironment.current[variable] == "1"
}
