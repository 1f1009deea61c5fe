import CloudDevice
import Foundation
import TestSupport
import Testing

@testable import Scenarios

/// The runner's cloud (`CloudRig`): its processes' JSON lines become the
/// timeline's lanes, and a rig let go ends its processes.
extension CloudProcessTests {
    /// `RunningProcess`'s readers hold only what they record into, never the
    /// rig's `CloudProcess`: a rig let go without `endAll` (a simulation a
    /// failing test drops) reaches its processes' `deinit`, which ends them.
    @Test func lettingGoOfACloudRigEndsItsProcesses() throws {
        let log = ScenarioLog()
        var pids: [Int32] = []
        do {
            try DeviceCloud(root: simulation, device: "iPhone").updateSettings { $0.account = "alice" }
            let rig = CloudRig(root: simulation, groupsim: BuiltExecutable.path("groupsim"), log: log)
            try rig.startServer()
            try rig.startAgent("iPhone")
            pids = rig.processIDs
        }
        #expect(pids.count == 2)
        let lanes = [CloudRig.serverLane, CloudRig.agentLane("iPhone")]
        func exited() -> Set<String> { Set(log.all.filter { $0.kind == .exit }.map(\.process)) }
        let deadline = Date().addingTimeInterval(20)
        while exited() != Set(lanes), Date() < deadline { usleep(10_000) }
        #expect(exited() == Set(lanes), "the rig's processes did not end once it was let go")
        for pid in pids { #expect(kill(pid, 0) == -1 && errno == ESRCH, "cloud process \(pid) outlived its rig") }
        // Their lines were the lanes' events, as they arrived.
        let events = log.all
        #expect(events.contains { $0.process == CloudRig.serverLane && $0.kind == .event && $0.name == "listening" })
        #expect(events.contains { $0.process == CloudRig.agentLane("iPhone") && $0.kind == .event && $0.name == "ready" })
    }
}
